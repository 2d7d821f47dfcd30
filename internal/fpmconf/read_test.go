package fpmconf

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/fpmconf/fpmtest"
)

const okPool = "[global]\nerror_log = @DIR@/error.log\n[www]\nuser = nobody\nlisten = @DIR@/www.sock\npm = static\npm.max_children = 2\n"

// TestRefusesWhatPHPFPMRefuses: where php-fpm -t refuses a file, the reader does too, naming the line.
func TestRefusesWhatPHPFPMRefuses(t *testing.T) {
	for name, c := range map[string]struct{ text, want string }{
		"# line":               {okPool + "# a comment\n", "php-fpm.conf:8: php-fpm 8.2 refuses this line: #"},
		"indented #":           {okPool + "  # a comment\n", "php-fpm.conf:8:"},
		"no =":                 {okPool + "just words\n", "php-fpm.conf:8:"},
		"unknown entry":        {okPool + "pm.max_childs = 3\n", "did you mean pm.max_children"},
		"global's in a pool":   {okPool + "log_level = debug\n", "it goes in [global]"},
		"not a number":         {okPool + "pm.max_requests = 5 # not a comment\n", "php-fpm.conf:8: pm.max_requests"},
		"a size is no number":  {okPool + "listen.backlog = 1K\n", "listen.backlog"},
		"bad time":             {okPool + "request_terminate_timeout = 5x\n", "request_terminate_timeout"},
		"bad boolean":          {okPool + "clear_env = maybe\n", "clear_env"},
		"bad flag":             {okPool + "php_flag[display_errors] = maybe\n", "php_flag[display_errors]"},
		"bad pm":               {okPool + "pm = often\n", "process manager"},
		"upper-case array":     {okPool + "PHP_VALUE[x] = 1\n", `unknown directive "PHP_VALUE"`},
		"upper-case include":   {okPool + "INCLUDE = @DIR@/x.conf\n", `unknown entry "include"`},
		"unclosed section":     {okPool + "[ www\n", "no closing ]"},
		"glob in missing dir":  {okPool + "include = @DIR@/nowhere/*.conf\n", "cannot list"},
		"pool's before a pool": {"pm = static\n" + okPool, `unknown entry "pm"`},
		"includes itself":      {okPool + "include = @DIR@/php-fpm.conf\n", "more than 5 files"},
	} {
		t.Run(name, func(t *testing.T) {
			main, _ := fpmtest.Single(c.text).Lay(t)
			if out, ok := fpmTest(t, main, "", false); ok {
				t.Fatalf("php-fpm takes it:\n%s", out)
			}
			if _, err := Read(main, Options{}); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want an error with %q", err, c.want)
			}
		})
	}
}

// TestTakesWhatPHPFPMTakes: what php-fpm -t takes, the reader takes, with php-fpm's warnings.
func TestTakesWhatPHPFPMTakes(t *testing.T) {
	for name, c := range map[string]struct{ text, warn string }{
		"include matching nothing": {okPool + "include = @DIR@/*.none\n", "nothing matches include=@DIR@/*.none"},
		"missing plain include":    {okPool + "include = @DIR@/gone.conf\n", "nothing matches"},
		"comments and quotes":      {okPool + "; a comment\npm.max_requests = \"5\" ; five\nlisten.backlog = -1\n[www] ; again\n", ""},
		"global's before sections": {"log_level = debug\n" + okPool, ""},
		"empty value":              {okPool + "php_value[error_log] =\n", ""},
		"a key in any case":        {okPool + "PM.Max_Children = 3\n", ""},
		"pool in any case":         {okPool + "[WWW]\npm.max_children = 3\n", ""},
	} {
		t.Run(name, func(t *testing.T) {
			main, _ := fpmtest.Single(c.text).Lay(t)
			if out, ok := fpmTest(t, main, "", false); !ok {
				t.Fatalf("php-fpm refuses it:\n%s", out)
			}
			cfg, err := Read(main, Options{})
			if err != nil {
				t.Fatal(err)
			}
			warn := strings.ReplaceAll(c.warn, "@DIR@", filepath.Dir(main))
			if (warn == "") != (len(cfg.Warnings) == 0) || warn != "" && !strings.Contains(cfg.Warnings[0], warn) {
				t.Errorf("warnings %q, want %q", cfg.Warnings, warn)
			}
		})
	}
}

// TestLayoutFacts are what tune and check got wrong before this reader, and where each value comes from.
func TestLayoutFacts(t *testing.T) {
	ls := layouts(t)
	read := func(name string) *Config {
		main, prefix := ls[name].Lay(t)
		c, err := Read(main, Options{Prefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	www := func(c *Config) *Section {
		p, ok := c.Pool("www")
		if !ok {
			t.Fatalf("no [www] in %v", c.PoolNames())
		}
		return p
	}

	docker := read("docker")
	if w := www(docker); w.Value("listen", "") != "9000" || !strings.HasSuffix(w.Directives["listen"].File, "zz-docker.conf") {
		t.Errorf("docker's listen: %+v", w.Directives["listen"])
	}
	if d := docker.Global.Directives["daemonize"]; d.Value != "" || !strings.HasSuffix(d.File, "zz-docker.conf") || d.Line != 2 {
		t.Errorf("docker's daemonize: %+v", d)
	}
	if n := len(docker.Files); n != 4 || !strings.HasSuffix(docker.Files[3].Path, "zz-docker.conf") {
		t.Errorf("docker's files: %+v", docker.Files)
	}

	twice := www(read("docker appended twice"))
	if d := twice.Directives["pm.max_children"]; d.Value != "11" || d.Line != 7 || len(d.Unused) != 2 || d.Unused[1].Line != 6 {
		t.Errorf("appended twice: %+v", d)
	}
	// php_admin_value[X] twice: php-fpm applies the first last (checked on a running pool: ini_get says 64M).
	if d, _ := twice.INI("memory_limit"); d.Value != "64M" || d.Line != 8 || len(d.Unused) != 1 || d.Unused[0].Line != 9 {
		t.Errorf("php_admin_value twice: %+v", d)
	}

	wodby := read("wodby")
	if got := wodby.PoolNames(); strings.Join(got, " ") != "www ping" {
		t.Errorf("wodby's pools %v: www first (www.conf), then ping", got)
	}
	w := www(wodby)
	if n, _ := w.Int("pm.max_children"); n != 8 || w.Value("listen", "") != "[::]:9000" {
		t.Errorf("wodby's www: %v", w.Directives)
	}
	if n, _ := w.Int("listen.backlog"); n != -1 {
		t.Errorf("listen.backlog = -1 read as %d", n)
	}
	if s, _ := w.Seconds("request_terminate_timeout"); s != 300 {
		t.Errorf("request_terminate_timeout 5m: %d", s)
	}
	if d, _ := w.INI("error_log"); d.Value != "/var/log/www.log" {
		t.Errorf("$pool: %q", d.Value)
	}
	if n, _ := w.Size("php_admin_value[memory_limit]"); n != 512<<20 {
		t.Errorf("memory_limit: %d", n)
	}

	lara := www(read("laradock"))
	if lara.Value("pm", "") != "ondemand" || !strings.HasSuffix(lara.Directives["pm"].File, "xlaravel.pool.conf") {
		t.Errorf("laradock's pm: %+v", lara.Directives["pm"])
	}
}

func TestManaged(t *testing.T) {
	for text, want := range map[string]string{
		"; Ansible managed\n[www]\n":                              "Ansible",
		"; origin-src: deb/php-fpm/multiphp.tpl\n[example.com]\n": "HestiaCP",
		"; from /nix/store/abc-php-fpm.conf\n":                    "Nix",
		"[www]\n; a comment\n":                                    "",
	} {
		got := managed("/etc/x.conf", []byte(text))
		if want == "" && got != "" || !strings.Contains(got, want) {
			t.Errorf("%q: %q, want %q", text, got, want)
		}
	}
}

func TestDefaultPrefix(t *testing.T) {
	c, err := Parse("/etc/php-fpm.conf", []byte("include = etc/php-fpm.d/*.conf\n"), Options{})
	if err == nil || c != nil || !strings.Contains(err.Error(), "/usr/etc/php-fpm.d") {
		t.Errorf("a relative include without a prefix is taken from /usr: %v", err)
	}
}
