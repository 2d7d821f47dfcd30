package apply

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/fpmconf"
	"github.com/phptune/phptune/internal/fpmconf/fpmtest"
	"github.com/phptune/phptune/internal/knob"
)

// layoutRec is the recommendation the layouts are applied: from the configuration's own pool, pm static with
// 6 children recycled after 500 requests, and the JIT on.
func layoutRec(t *testing.T, main, prefix string) knob.Config {
	t.Helper()
	c, err := fpmconf.Read(main, fpmconf.Options{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	rec := knob.Debian()
	if err := rec.FromPoolConfig(c); err != nil {
		t.Fatal(err)
	}
	rec.PM, rec.MaxChildren, rec.MaxRequests = "static", 6, 500
	rec.StartServers, rec.MinSpare, rec.MaxSpare = 0, 0, 0
	rec.SetSetting("opcache.jit", "tracing")
	rec.SetSetting("opcache.jit_buffer_size", "64M")
	return rec
}

// recommended are the [www] values php-fpm -tt prints once layoutRec is applied.
var recommended = map[string]string{"pm": "static", "pm.max_children": "6", "pm.max_requests": "500", "php_admin_value[opcache.jit]": "tracing"}

// poolDiffs are the plan's diffs of php-fpm's pool files (its ini file and nginx's go elsewhere).
func poolDiffs(p *Plan) string {
	var b strings.Builder
	for _, f := range p.Files {
		if strings.HasPrefix(f.Name, "php-fpm-") {
			b.WriteString(f.Diff)
		}
	}
	return b.String()
}

// patchIn applies a diff whose paths are absolute (a/PATH) with patch -d / -p1, as the plan says.
func patchIn(t *testing.T, diff string) {
	t.Helper()
	f := filepath.Join(t.TempDir(), DiffName)
	if err := os.WriteFile(f, []byte(diff), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("patch", "-d", "/", "-p1", "-i", f).CombinedOutput(); err != nil {
		t.Fatalf("patch: %v\n%s\n%s", err, out, diff)
	}
}

// On the layouts php-fpm's configuration is found in, the plan's diff changes [www] where php-fpm takes each
// value from: php-fpm -tt then runs the recommended values, on the same address, and other pools as they were.
func TestLayoutsRunTheRecommendation(t *testing.T) {
	docker := fpmtest.Docker(t)
	for name, l := range map[string]fpmtest.Layout{
		"docker":      docker,
		"value twice": docker.With(map[string]string{"etc/php-fpm.d/www.conf": "pm.max_children = 50\n"}),
		"laradock":    docker.With(map[string]string{"etc/php-fpm.d/xlaravel.pool.conf": fpmtest.LaradockPool}),
		"wodby":       docker.With(map[string]string{"etc/php-fpm.d/zz-www.conf": fpmtest.WodbyWWW}),
		"debian": {Main: "php-fpm.conf", Files: map[string]string{
			"php-fpm.conf":    strings.Replace(fpmtest.ReadFile(t, fpmtest.DebianMain), "/etc/php/8.2/fpm/pool.d/", "@DIR@/pool.d/", 1),
			"pool.d/www.conf": fpmtest.ReadFile(t, fpmtest.DebianPool),
		}},
	} {
		t.Run(name, func(t *testing.T) {
			main, prefix := l.Lay(t)
			before := fpmtest.DumpOf(t, main, prefix)
			p, err := Make(layoutRec(t, main, prefix), Start{Pool: File{Path: main, Text: read(t, main)}, Prefix: prefix},
				Target{Version: version, Workers: 2}, []string{"phptune test"})
			if err != nil {
				t.Fatal(err)
			}
			patchIn(t, poolDiffs(p))
			after := fpmtest.DumpOf(t, main, prefix)
			checkRuns(t, before, after, p)
			checkNoDeadLines(t, p)
		})
	}
}

// checkRuns: [www] runs the recommended values and, but for the spare servers pm static zeroes, the others it
// ran before; other pools and [global] are as they were.
func checkRuns(t *testing.T, before, after fpmtest.Dump, p *Plan) {
	t.Helper()
	www := after["www"]
	for k, v := range recommended {
		if got := www[k]; len(got) == 0 || got[len(got)-1] != v {
			t.Errorf("[www] %s = %v, want %s; the plan:\n%s\n%s", k, got, v, strings.Join(p.Effective(), "\n"), p.Diffs())
		}
	}
	// The pool's own status page, or one for phptune check where it had none (-tt says "undefined").
	want := "/fpm-status"
	if own := before["www"]["pm.status_path"]; len(own) > 0 && own[len(own)-1] != "undefined" {
		want = own[len(own)-1]
	}
	if got := www["pm.status_path"]; len(got) == 0 || got[len(got)-1] != want {
		t.Errorf("[www] pm.status_path = %v, want %s (the pool's own, or one for phptune check)", got, want)
	}
	for k, v := range before["www"] {
		if _, ok := recommended[k]; !ok && !spares[k] && k != "pm.status_path" && !slices.Equal(www[k], v) {
			t.Errorf("[www] %s = %v, was %v: the plan changed what the run did not decide", k, www[k], v)
		}
	}
	for name, s := range before {
		if name != "www" && !maps.EqualFunc(s, after[name], slices.Equal) {
			t.Errorf("[%s] changed: %v, was %v", name, after[name], s)
		}
	}
	if addr := before["www"]["listen"]; len(addr) == 0 || addr[len(addr)-1] != p.Listen {
		t.Errorf("the plan has the pool on %q, php-fpm on %v", p.Listen, addr)
	}
}

var spares = map[string]bool{"pm.start_servers": true, "pm.min_spare_servers": true, "pm.max_spare_servers": true}

// checkNoDeadLines: each line the diffs add sets what php-fpm runs; the lines that no longer do are commented
// out, and the plan says so.
func checkNoDeadLines(t *testing.T, p *Plan) {
	t.Helper()
	for _, c := range p.Changes {
		if !c.Applied || c.At == "" {
			t.Errorf("%s not applied at %q", c.Key, c.At)
		}
	}
	for _, n := range p.Notes {
		if strings.Contains(n, "does not use") && !strings.Contains(n, "commented out") {
			t.Errorf("note: %s", n)
		}
	}
}

// A file a tool generates is not edited: the plan says where the change belongs, and what php-fpm runs stays.
func TestManagedFileIsNotEdited(t *testing.T) {
	l := fpmtest.Docker(t).With(map[string]string{"etc/php-fpm.d/xlaravel.pool.conf": "; Ansible managed\n" + fpmtest.LaradockPool})
	main, prefix := l.Lay(t)
	p, err := Make(layoutRec(t, main, prefix), Start{Pool: File{Path: main, Text: read(t, main)}, Prefix: prefix},
		Target{Version: version, Workers: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	managed := filepath.Join(filepath.Dir(main), "php-fpm.d/xlaravel.pool.conf")
	if strings.Contains(p.Diffs(), managed) {
		t.Errorf("the diff edits %s:\n%s", managed, p.Diffs())
	}
	said := false
	for _, n := range p.Notes {
		said = said || strings.Contains(n, managed+" is generated by Ansible") && strings.Contains(n, "pm = static")
	}
	if !said {
		t.Errorf("no note says %s is generated and where pm = static goes: %q", managed, p.Notes)
	}
	for _, c := range p.Changes {
		if strings.HasPrefix(c.At, managed) == c.Applied {
			t.Errorf("%s at %s: applied %v", c.Key, c.At, c.Applied)
		}
	}
}
