package tune

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/apply"
	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/measure"
	"github.com/phptune/phptune/internal/stack"
)

// TestApplyRequest: the files' target is sized for the place's whole CPUs (the host's without a limit), the
// docroot is absolute, the header says where and when, and the servers and the starting files are passed on.
func TestApplyRequest(t *testing.T) {
	res := &Result{App: "demo", Started: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Environment:    Environment{Host: measure.Host{CPUModel: "Xeon", CPUs: 8}, PHP: "PHP 8.2.7 (fpm-fcgi)"},
		Recommendation: knob.Config{INI: map[string]string{"opcache.enable": "1"}}}
	sc := stack.Config{App: "app/public", Front: "index.php", PHPFPM: "/usr/sbin/php-fpm8.2", Nginx: "/usr/sbin/nginx"}
	from := apply.From{Pool: "www.conf", Docroot: "app/public"}
	called := false
	steps := func(io.Writer, *apply.Plan, string) { called = true }

	r := res.applyRequest(sc, from, steps)
	abs, _ := filepath.Abs("app/public")
	if r.Target.Workers != 8 || r.Target.Docroot != abs || r.Target.Front != "index.php" {
		t.Errorf("target %+v, want 8 workers, docroot %s, front index.php", r.Target, abs)
	}
	want := []string{"phptune tune recommendation for demo, measured on Xeon (8 CPUs) on 2026-01-02.",
		"Valid for this host and this load; measure again before applying it elsewhere."}
	if !slices.Equal(r.Header, want) {
		t.Errorf("header %q, want %q", r.Header, want)
	}
	if r.Servers != (apply.Servers{PHPFPM: sc.PHPFPM, Nginx: sc.Nginx}) || r.From != from || r.Banner != res.Environment.PHP {
		t.Errorf("servers %+v, from %+v, banner %q: not passed on", r.Servers, r.From, r.Banner)
	}
	if r.Rec.INI["opcache.enable"] != "1" {
		t.Errorf("the recommendation is not the one written: %+v", r.Rec)
	}
	if r.Steps(io.Discard, nil, ""); !called {
		t.Error("steps are not the ones given")
	}

	// A cgroup's quota of 1.5 CPUs: two workers; no app (the demo's own copy): no docroot.
	res.Environment.Limits = &measure.Limits{HostCPUs: 8, CPUQuota: 1.5}
	if r := res.applyRequest(stack.Config{}, apply.From{}, nil); r.Target.Workers != 2 || r.Target.Docroot != "" {
		t.Errorf("under a 1.5 CPU quota without an app: target %+v, want 2 workers and no docroot", r.Target)
	}
}

// TestReadRecommendation: serve --recommendation reads a tune result's recommendation; a file that is not one,
// or none, is a usage error that says what to give.
func TestReadRecommendation(t *testing.T) {
	dir := t.TempDir()
	good, other, empty := filepath.Join(dir, "result.json"), filepath.Join(dir, "bench.json"), filepath.Join(dir, "norec.json")
	data, _ := json.Marshal(map[string]any{"schema": Schema, "recommendation": knob.Config{INI: map[string]string{"opcache.jit": "tracing"}}})
	os.WriteFile(good, data, 0o644)
	os.WriteFile(other, []byte(`{"schema": "phptune/bench/v1"}`), 0o644)
	os.WriteFile(empty, []byte(`{"schema": "`+Schema+`"}`), 0o644)
	rec, err := ReadRecommendation(good)
	if err != nil || rec.INI["opcache.jit"] != "tracing" {
		t.Errorf("a tune result: %+v, %v; want its recommendation", rec, err)
	}
	for path, want := range map[string]string{other: "not a tune result", empty: "not a tune result",
		filepath.Join(dir, "missing.json"): "--recommendation: "} {
		if rec, err := ReadRecommendation(path); rec != nil || exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, %v; want a usage error with %q", filepath.Base(path), rec, err, want)
		}
	}
}
