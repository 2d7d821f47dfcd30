package measure

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestReadFPMConfigFollowsIncludesInOrder(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"php-fpm.conf": "[global]\npid = /run/x.pid ; a comment\ninclude=" + dir + "/pool.d/*.conf\n",
		// Sorted by name, as glob(3) gives them: b.conf overrides a.conf's www.
		"pool.d/a.conf": `[www]
user = www-data
listen = /run/php/$pool.sock
pm = dynamic
pm.max_children = 5
php_admin_value[memory_limit] = "256M"
php_value[error_log] = /var/log/${LOGNAME_FOR_TEST}.log
`,
		"pool.d/b.conf":     "; second file\n[www]\npm.max_children = 12\npm.status_path = /status\n\n[api]\nlisten = 9001\npm = static\npm.max_children = 4\npm.max_requests = 500\n",
		"pool.d/dir.conf/x": "", // a directory the pattern matches is skipped
	})
	env := func(k string) string { return map[string]string{"LOGNAME_FOR_TEST": "site"}[k] }
	cfg, err := ReadFPMConfig(filepath.Join(dir, "php-fpm.conf"), env)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Files) != 3 || cfg.Global["pid"] != "/run/x.pid" {
		t.Errorf("files %v global %v", cfg.Files, cfg.Global)
	}
	if len(cfg.Pools) != 2 || cfg.Pools[0].Name != "www" || cfg.Pools[1].Name != "api" {
		t.Fatalf("pools %+v", cfg.Pools)
	}
	www := cfg.Pools[0]
	if www.MaxChildren != 12 || www.PM != "dynamic" || www.StatusPath != "/status" || www.File != filepath.Join(dir, "pool.d/b.conf") {
		t.Errorf("www %+v", www)
	}
	if www.Network != "unix" || www.Address != "/run/php/www.sock" {
		t.Errorf("www listens at %s %s", www.Network, www.Address)
	}
	if v, ok := www.INI("memory_limit"); !ok || v != "256M" {
		t.Errorf("memory_limit %q %v", v, ok)
	}
	if v, _ := www.INI("error_log"); v != "/var/log/site.log" {
		t.Errorf("${VAR} not expanded: %q", v)
	}
	api := cfg.Pools[1]
	if api.Network != "tcp" || api.Address != "127.0.0.1:9001" || api.MaxRequests != 500 || api.StatusPath != "" {
		t.Errorf("api %+v", api)
	}
}

func TestReadFPMConfigFaults(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"loop.conf":    "include=" + dir + "/loop.conf\n",
		"bad.conf":     "[www]\nthis is not a directive\n",
		"nothing.conf": "include=" + dir + "/none/*.conf\n[www]\npm = static\n",
		"none/a.txt":   "", // the directory is there, no *.conf in it
	})
	if _, err := ReadFPMConfig(filepath.Join(dir, "loop.conf"), nil); err == nil || !strings.Contains(err.Error(), "one in another") {
		t.Errorf("a file that includes itself: %v", err)
	}
	if _, err := ReadFPMConfig(filepath.Join(dir, "bad.conf"), nil); err == nil || !strings.Contains(err.Error(), "bad.conf:2") {
		t.Errorf("a bad line: %v", err)
	}
	cfg, err := ReadFPMConfig(filepath.Join(dir, "nothing.conf"), nil)
	if err != nil || len(cfg.Warnings) != 1 || !strings.Contains(cfg.Warnings[0], "nothing matches") {
		t.Errorf("an include matching nothing: %v %v", err, cfg)
	}
	if _, err := ReadFPMConfig(filepath.Join(dir, "missing.conf"), nil); err == nil {
		t.Error("a missing file read")
	}
}

// TestReadDebiansFPMConfig reads the configuration Debian's php8.2-fpm ships (make deps installs it).
func TestReadDebiansFPMConfig(t *testing.T) {
	cfg, err := ReadFPMConfig("/etc/php/8.2/fpm/php-fpm.conf", nil)
	if err != nil {
		t.Fatalf("(needs php8.2-fpm: make deps) %v", err)
	}
	www, ok := cfg.Pool("www")
	if !ok || www.Network != "unix" || www.Address != "/run/php/php8.2-fpm.sock" || www.PM == "" || www.MaxChildren < 1 {
		t.Errorf("Debian's www pool: %+v", www)
	}
}

func TestListenAddress(t *testing.T) {
	for in, want := range map[string][2]string{
		"/run/php/php8.2-fpm.sock": {"unix", "/run/php/php8.2-fpm.sock"},
		"9000":                     {"tcp", "127.0.0.1:9000"},
		"127.0.0.1:9000":           {"tcp", "127.0.0.1:9000"},
		"0.0.0.0:9000":             {"tcp", "127.0.0.1:9000"},
		"[::]:9000":                {"tcp", "[::1]:9000"},
		"[::1]:9000":               {"tcp", "[::1]:9000"},
		"localhost:9000":           {"tcp", "localhost:9000"},
		"":                         {"", ""},
	} {
		n, a := ListenAddress(in)
		if n != want[0] || a != want[1] {
			t.Errorf("ListenAddress(%q) = %s %s, want %s %s", in, n, a, want[0], want[1])
		}
	}
}

func TestMasterConfigPath(t *testing.T) {
	for title, want := range map[string]string{
		"php-fpm: master process (/etc/php/8.2/fpm/php-fpm.conf)": "/etc/php/8.2/fpm/php-fpm.conf",
		"php-fpm: master process (/tmp/a (b)/php-fpm.conf)":       "/tmp/a (b)/php-fpm.conf",
		"php-fpm: master process":                                 "",
	} {
		if got := masterConfigPath(title); got != want {
			t.Errorf("%q: %q, want %q", title, got, want)
		}
	}
}
