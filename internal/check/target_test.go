package check

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/exitcode"
)

func TestResolveTargets(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "php-fpm.conf")
	os.WriteFile(conf, []byte("[global]\ninclude="+dir+"/pool.d/*.conf\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "pool.d"), 0o755)
	os.WriteFile(filepath.Join(dir, "pool.d/a.conf"), []byte("[www]\nlisten = /run/php/www.sock\npm = static\npm.max_children = 4\npm.status_path = /fpm-status\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "pool.d/b.conf"), []byte("[api]\nlisten = 9001\npm = dynamic\npm.max_children = 9\n"), 0o644)

	ts, sk, err := Resolve([]string{conf}, Given{StatusPath: DefaultStatusPath})
	if err != nil || len(ts) != 1 || len(sk) != 1 {
		t.Fatalf("targets %+v skipped %+v err %v", ts, sk, err)
	}
	if ts[0].Name != "www" || ts[0].Network != "unix" || ts[0].Address != "/run/php/www.sock" || ts[0].StatusPath != "/fpm-status" || ts[0].Pool.MaxChildren != 4 {
		t.Errorf("www: %+v", ts[0])
	}
	if s := sk[0]; s.Pool != "api" || !strings.Contains(s.Fix, "add pm.status_path = /status to [api] in "+filepath.Join(dir, "pool.d/b.conf")) ||
		!strings.Contains(s.Fix, "reload") {
		t.Errorf("api without a status path: %+v", s)
	}
	// --fpm-status given: every pool is sampled at it.
	if ts, sk, err := Resolve([]string{conf}, Given{StatusPath: "/st", StatusSet: true}); err != nil || len(ts) != 2 || len(sk) != 0 || ts[1].StatusPath != "/st" || ts[1].Address != "127.0.0.1:9001" {
		t.Errorf("with --fpm-status: %+v %+v %v", ts, sk, err)
	}
	for arg, want := range map[string][2]string{"tcp:10.0.0.1:9000": {"tcp", "10.0.0.1:9000"}, "127.0.0.1:9000": {"tcp", "127.0.0.1:9000"},
		"unix:/run/php/x.sock": {"unix", "/run/php/x.sock"}} {
		ts, _, err := Resolve([]string{arg}, Given{StatusPath: "/status"})
		if err != nil || len(ts) != 1 || ts[0].Network != want[0] || ts[0].Address != want[1] || ts[0].StatusPath != "/status" {
			t.Errorf("%s: %+v %v", arg, ts, err)
		}
	}
	// No --fpm-status: DefaultStatusPath; one that is not a path is refused before anything is read.
	if ts, _, err := Resolve([]string{"unix:/run/php/x.sock"}, Given{}); err != nil || len(ts) != 1 || ts[0].StatusPath != DefaultStatusPath {
		t.Errorf("no status path given: %+v %v, want %s", ts, err, DefaultStatusPath)
	}
	if _, _, err := Resolve([]string{"unix:/run/php/x.sock"}, Given{StatusPath: "status", StatusSet: true}); exitcode.Of(err) != exitcode.Usage ||
		err.Error() != `--fpm-status "status": want a path starting with /, as pm.status_path is written` {
		t.Errorf("--fpm-status status: %v, want a usage error asking for /", err)
	}
	for _, arg := range []string{"tcp:nonsense", filepath.Join(dir, "missing.conf"), dir, "no-such-pool-name-here"} {
		if _, _, err := Resolve([]string{arg}, Given{StatusPath: "/status"}); exitcode.Of(err) != exitcode.Usage {
			t.Errorf("%s: %v, want a usage error", arg, err)
		}
	}
}

// TestResolveReadsAsPHPFPM: a pool file is read as php-fpm reads it: a later [www] adds to the first, the last
// value set wins, and a line php-fpm refuses is refused with its place.
func TestResolveReadsAsPHPFPM(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "zz-www.conf")
	os.WriteFile(conf, []byte("[ping]\nlisten = 127.0.0.1:9001\npm = static\npm.max_children = 1\npm.status_path = /s\n"+
		"[www]\nlisten = [::]:9000\npm = dynamic\npm.max_children = 8\npm.status_path = /status\nlisten.backlog = -1\n"+
		"[ping]\npm.max_children = 2\n[www]\npm.max_children = 9\n"), 0o644)
	ts, _, err := Resolve([]string{conf}, Given{})
	if err != nil || len(ts) != 2 {
		t.Fatalf("targets %+v err %v", ts, err)
	}
	if www := ts[1]; www.Name != "www" || www.Address != "[::1]:9000" || www.Pool.MaxChildren != 9 || ts[0].Pool.MaxChildren != 2 {
		t.Errorf("www %+v, ping %+v", www.Pool, ts[0].Pool)
	}
	bad := filepath.Join(dir, "bad.conf")
	os.WriteFile(bad, []byte("[www]\nlisten = 9000\n# pm = static\n"), 0o644)
	if _, _, err := Resolve([]string{bad}, Given{}); exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), "bad.conf:3") {
		t.Errorf("a # line: %v, want a usage error at bad.conf:3", err)
	}
}
