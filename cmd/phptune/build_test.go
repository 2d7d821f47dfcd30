package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestBuildBadInput(t *testing.T) {
	empty := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"build", "--rounds", "3"}, "at least 6 rounds"},
		{[]string{"build", "--variants", "turbo"}, "want baseline, pgo"},
		{[]string{"build", empty}, "want a docroot with index.php"},
		{[]string{"build", "--source", filepath.Join(empty, "nope.tar.xz"), "--no-verify", "--cache", filepath.Join(empty, "c"), "--out", filepath.Join(empty, "o")}, "--source"},
	} {
		r := phptune(t, c.args...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q: want 2 and %q", c.args, r.code, r.stderr, c.want)
		}
	}
	app := t.TempDir()
	os.WriteFile(filepath.Join(app, "index.php"), []byte("<?php echo 1;"), 0o644)
	if r := phptune(t, "build", app); r.code != 2 || !strings.Contains(r.stderr, "--url") {
		t.Errorf("APP without --url: exit %d, %q", r.code, r.stderr)
	}
}

// fakeToolchain is PHP's build reduced to its effects on the file system, with Debian's real php-fpm, php-cgi
// and opcache.so linked in where the built ones would be: the CLI's whole path (cache, install, smoke test
// through nginx + php-fpm, PGO's profile check, the JSON) runs in seconds.
const fakeConfigure = `#!/bin/sh
for a in "$@"; do case "$a" in --prefix=*) echo "${a#--prefix=}" > prefix.txt;; esac; done
`

const fakeMake = `#!/bin/sh
oc=$(ls /usr/lib/php/*/opcache.so | head -1)
# Debian's php-cgi run with -n lacks the extensions the real build has built in (ctype for the demo, xml for
# DokuWiki): load the ones Debian enables for php-cgi, in Debian's order.
exts=$(sed -n 's/^extension=/-d extension=/p' /etc/php/*/cgi/conf.d/*.ini | tr '\n' ' ')
cgi() { printf '#!/bin/sh\nexec %s %s "$@"\n' "$(readlink -f /usr/bin/php-cgi)" "$exts" > "$1"; chmod +x "$1"; }
# Likewise php-fpm, which in a prefix of its own runs with an empty conf.d: the extensions a real build has built
# in, by absolute path (the prefix's php.ini names its own extension_dir).
extdir=$(ls -d /usr/lib/php/20*/ | head -1)
fexts=$(sed -n "s|^extension=\(.*\)|-d extension=$extdir\1|p" /etc/php/*/fpm/conf.d/*.ini | tr '\n' ' ')
fpm() { printf '#!/bin/sh\nexec %s %s "$@"\n' "$(readlink -f "$(ls /usr/sbin/php-fpm8.* | head -1)")" "$fexts" > "$1"; chmod +x "$1"; }
case "$*" in
*install*)
	for a in "$@"; do case "$a" in INSTALL_ROOT=*) root="${a#INSTALL_ROOT=}";; esac; done
	p="$root$(cat prefix.txt)"
	mkdir -p "$p/sbin" "$p/bin" "$p/lib/php/extensions/no-debug-non-zts-20220829"
	fpm "$p/sbin/php-fpm"
	cgi "$p/bin/php-cgi"
	ln -s "$oc" "$p/lib/php/extensions/no-debug-non-zts-20220829/opcache.so"
	;;
*prof-gen*)
	mkdir -p Zend sapi/cgi modules
	cgi sapi/cgi/php-cgi
	ln -s "$oc" modules/opcache.so
	;;
*)
	# FAKE_HANG=FILE: make says it runs (FILE) and hangs, for a test to interrupt it there.
	if [ -n "${FAKE_HANG:-}" ]; then : > "$FAKE_HANG"; sleep 60; fi
	mkdir -p Zend; echo '<?php echo 1;' > Zend/bench.php
	;;
esac
`

// fakeSource is a PHP source tree with the fake configure, and the fake make, in a temporary directory.
func fakeSource(t *testing.T) (dir, src, mk string) {
	dir = t.TempDir()
	src = filepath.Join(dir, "php-src")
	os.MkdirAll(filepath.Join(src, "main"), 0o755)
	os.WriteFile(filepath.Join(src, "main", "php_version.h"), []byte("#define PHP_VERSION \"8.2.36\"\n"), 0o644)
	os.WriteFile(filepath.Join(src, "configure"), []byte(fakeConfigure), 0o755)
	mk = filepath.Join(dir, "make")
	os.WriteFile(mk, []byte(fakeMake), 0o755)
	return dir, src, mk
}

func TestBuildFakeToolchain(t *testing.T) {
	dir, src, mk := fakeSource(t)
	cache := filepath.Join(dir, "cache")
	run := func() (res buildJSON, code int, stderr string) {
		cmd := exec.Command(binPath(t), "build", "--source", src, "--make", mk, "--cache", cache, "--out", filepath.Join(dir, "out"),
			"--variants", "baseline,pgo,pgo+lto", "--no-verify", "--train-n", "1", "--json")
		var so, se strings.Builder
		cmd.Stdout, cmd.Stderr = &so, &se
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(so.String()), &res); err != nil {
			t.Fatalf("exit %d, not JSON: %v\n%s\nstderr: %s", code, err, so.String(), se.String())
		}
		return res, code, se.String()
	}
	res, code, stderr := run()
	if code != 0 || res.Schema != "phptune/build/v1" || res.Partial {
		t.Fatalf("exit %d, schema %q, partial %v; stderr %s", code, res.Schema, res.Partial, stderr)
	}
	byName := map[string]buildVariant{}
	for _, v := range res.Variants {
		byName[v.Name] = v
	}
	b := byName["baseline"]
	if !b.Available || !strings.HasPrefix(b.Prefix, cache) || b.Cached {
		t.Errorf("baseline %+v", b)
	}
	if _, err := os.Stat(filepath.Join(b.Prefix, "phptune-build.json")); err != nil {
		t.Errorf("no manifest in the prefix: %v", err)
	}
	// Training ran (Debian's php-cgi served the demo's URLs) but wrote no .gcda: pgo is unavailable, with why.
	if p := byName["pgo"]; p.Available || !strings.Contains(p.Reason, "no PGO profiles") {
		t.Errorf("pgo %+v", p)
	}
	if l := byName["pgo+lto"]; l.Available || !strings.Contains(l.Reason, "no PGO profiles") {
		t.Errorf("pgo+lto %+v", l)
	}
	if !strings.Contains(strings.Join(res.Configure, " "), "--enable-ctype") {
		t.Errorf("configure args %v: the demo app needs ctype", res.Configure)
	}
	// report.html beside result.json, with the unavailable variants' reasons and the environment.
	page, err := os.ReadFile(filepath.Join(dir, "out", "report.html"))
	if err != nil {
		t.Errorf("no report.html in --out: %v", err)
	}
	for _, want := range []string{"no PGO profiles", "<dt>compiler</dt>", "<dt>command</dt>", "<dt>kernel</dt>"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	// An unchanged request is answered from the cache.
	res2, code, _ := run()
	if code != 0 || len(res2.Variants) == 0 || !res2.Variants[0].Cached || res2.Variants[0].Prefix != b.Prefix {
		t.Errorf("second run: exit %d, %+v", code, res2.Variants)
	}
}

func TestBuildInterrupted(t *testing.T) {
	dir, src, mk := fakeSource(t)
	cache := filepath.Join(dir, "cache")
	hanging := filepath.Join(dir, "make-hangs")
	w := startWatched(t, []string{"FAKE_HANG=" + hanging}, "build", "--source", src, "--make", mk, "--cache", cache,
		"--out", filepath.Join(dir, "out"), "--no-verify", "--json")
	// Ctrl-C once make runs (it says so, then hangs).
	w.until(t, "make running", func() bool { _, err := os.Stat(hanging); return err == nil })
	code, took := w.stop(t, syscall.SIGINT)
	if code != 130 {
		t.Fatalf("exit %d, want 130; stderr %s", code, w.se.String())
	}
	if took > 15*time.Second {
		t.Errorf("took %v to stop after Ctrl-C", took)
	}
	var res buildJSON
	if err := json.Unmarshal([]byte(w.so.String()), &res); err != nil || !res.Partial {
		t.Errorf("want the partial result as JSON: %v\n%s", err, w.so.String())
	}
	if page, err := os.ReadFile(filepath.Join(dir, "out", "report.html")); err != nil || !strings.Contains(string(page), `id="partial"`) {
		t.Errorf("report.html of the interrupted build: %v, or it is not marked partial", err)
	}
	ents, _ := os.ReadDir(cache)
	for _, e := range ents {
		if e.Name() != "logs" && e.Name() != "sources" {
			t.Errorf("left in the cache after Ctrl-C: %s", e.Name())
		}
	}
}

func TestTuneBuildsNeedsCache(t *testing.T) {
	cmd := exec.Command(binPath(t), "tune", "--builds", "--budget", "1m")
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), "run phptune build first") {
		t.Errorf("exit %v: %s", err, out)
	}
}

type buildVariant struct {
	Name      string `json:"name"`
	Prefix    string `json:"prefix"`
	Available bool   `json:"available"`
	Reason    string `json:"reason"`
	Cached    bool   `json:"cached"`
}

type buildJSON struct {
	Schema    string         `json:"schema"`
	App       string         `json:"app"`
	Train     []string       `json:"train_urls"`
	Holdout   []string       `json:"holdout_urls"`
	Partial   bool           `json:"partial"`
	Configure []string       `json:"configure_args"`
	Variants  []buildVariant `json:"variants"`
}
