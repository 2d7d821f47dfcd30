package phpini

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestBaselineIgnoresHostEdits: an administrator's php.ini and module settings do not reach the baseline; the
// modules the host enables do, as their packages ship them.
func TestBaselineIgnoresHostEdits(t *testing.T) {
	root := t.TempDir()
	r := Roots{Etc: filepath.Join(root, "etc"), Lib: filepath.Join(root, "lib"), Share: filepath.Join(root, "share")}
	write(t, filepath.Join(r.Lib, "8.2", "php.ini-production"), "[PHP]\nmemory_limit = 128M\n")
	write(t, filepath.Join(r.Etc, "8.2", "fpm", "php.ini"), "[PHP]\nmemory_limit = 4G\n")
	// redis: no pristine copy; its settings go, its extension line stays.
	write(t, filepath.Join(r.Etc, "8.2", "fpm", "conf.d", "20-redis.ini"), "; comment\nextension = redis.so\nredis.session.locking_enabled=1\n")
	// opcache: enabled through a link to mods-available, edited on the host, pristine under share.
	write(t, filepath.Join(r.Etc, "8.2", "mods-available", "opcache.ini"), "zend_extension=opcache.so\nopcache.enable=0\n")
	write(t, filepath.Join(r.Share, "php8.2-opcache", "opcache", "opcache.ini"), "zend_extension=opcache.so\nopcache.jit=off\n")
	if err := os.Symlink(filepath.Join(r.Etc, "8.2", "mods-available", "opcache.ini"), filepath.Join(r.Etc, "8.2", "fpm", "conf.d", "10-opcache.ini")); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	f, err := r.Baseline("/usr/sbin/php-fpm8.2", dir)
	if err != nil {
		t.Fatal(err)
	}
	read := func(p string) string { data, _ := os.ReadFile(p); return string(data) }
	if got := read(f.INI); !strings.Contains(got, "128M") {
		t.Errorf("php.ini is not Debian's production one:\n%s", got)
	}
	if got := read(filepath.Join(f.ScanDir, "10-opcache.ini")); got != "zend_extension=opcache.so\nopcache.jit=off\n" {
		t.Errorf("opcache.ini is not as shipped:\n%s", got)
	}
	if got := read(filepath.Join(f.ScanDir, "20-redis.ini")); got != "extension = redis.so\n" {
		t.Errorf("redis.ini keeps more than its extension line:\n%s", got)
	}
	if f, err := r.Baseline("/opt/phptune/sbin/php-fpm", dir); err != nil || f != (Files{}) {
		t.Errorf("a build of our own: %+v %v, want nothing written", f, err)
	}
	if _, err := (Roots{Lib: root}).Baseline("/usr/sbin/php-fpm7.4", dir); err == nil || !strings.Contains(err.Error(), "php7.4-common") {
		t.Errorf("missing php.ini-production: %v", err)
	}
}

// TestBaselineLoadsTheHostsModules: the installed php-fpm, started on the baseline, has the modules the host's
// own configuration gives it.
func TestBaselineLoadsTheHostsModules(t *testing.T) {
	const fpm = "/usr/sbin/php-fpm8.2"
	if _, err := os.Stat(fpm); err != nil {
		t.Fatalf("%s: %v (make deps installs it)", fpm, err)
	}
	f, err := Baseline(fpm, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	host, err := exec.Command(fpm, "-m").Output()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(fpm, "-c", f.INI, "-m")
	cmd.Env = append(os.Environ(), f.Env()...)
	ours, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if string(ours) != string(host) {
		t.Errorf("modules differ:\nhost:\n%s\nbaseline:\n%s", host, ours)
	}
	if !strings.Contains(string(ours), "Zend OPcache") {
		t.Errorf("no opcache on the baseline:\n%s", ours)
	}
}

// TestBaselineForABuild: a php-fpm in a prefix of its own runs with Debian's production settings of its version,
// then its prefix's php.ini (which loads its opcache), and scans no conf.d; a binary without a prefix php.ini
// gets nothing.
func TestBaselineForABuild(t *testing.T) {
	root := t.TempDir()
	r := Roots{Etc: filepath.Join(root, "etc"), Lib: filepath.Join(root, "lib"), Share: filepath.Join(root, "share")}
	write(t, filepath.Join(r.Lib, "8.2", "php.ini-production"), "[PHP]\noutput_buffering = 4096\nzend.assertions = -1\n")
	prefix := filepath.Join(root, "builds", "pgo-abc")
	fpm := filepath.Join(prefix, "sbin", "php-fpm")
	write(t, fpm, "#!/bin/sh\necho 'PHP 8.2.29 (fpm-fcgi) (built: Nov 23 2026 20:00:00)'\n")
	if err := os.Chmod(fpm, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(prefix, "lib", "php.ini"), "zend_extension=/builds/pgo-abc/opcache.so\nopcache.enable=1\n")
	dir := t.TempDir()
	f, err := r.Baseline(fpm, dir)
	if err != nil {
		t.Fatal(err)
	}
	ini, err := os.ReadFile(f.INI)
	if err != nil {
		t.Fatal(err)
	}
	prod, own := strings.Index(string(ini), "output_buffering = 4096"), strings.Index(string(ini), "zend_extension=/builds/pgo-abc/opcache.so")
	if prod < 0 || own < prod {
		t.Errorf("php.ini: want the production settings, then the prefix's:\n%s", ini)
	}
	if ents, err := os.ReadDir(f.ScanDir); err != nil || len(ents) != 0 || len(f.Env()) != 1 {
		t.Errorf("conf.d %s: %v %v; want an empty one, scanned", f.ScanDir, ents, err)
	}
	// No prefix php.ini: not a build of phptune's.
	other := filepath.Join(root, "opt", "sbin", "php-fpm")
	write(t, other, "#!/bin/sh\necho 'PHP 8.2.29 (fpm-fcgi)'\n")
	if f, err := r.Baseline(other, t.TempDir()); err != nil || f.INI != "" {
		t.Errorf("a php-fpm without a prefix php.ini: %+v %v", f, err)
	}
	// A version the host has no production php.ini for: said, not papered over.
	write(t, fpm, "#!/bin/sh\necho 'PHP 8.4.1 (fpm-fcgi)'\n")
	if _, err := r.Baseline(fpm, t.TempDir()); err == nil || !strings.Contains(err.Error(), "php8.4-common") {
		t.Errorf("8.4 build on an 8.2 host: %v", err)
	}
}
