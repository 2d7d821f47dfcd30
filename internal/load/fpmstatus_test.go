package load

import (
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/measure"
)

// TestParseStatusSource: --fpm-status as a path on a FastCGI target's own pool, or a pool's address and path.
func TestParseStatusSource(t *testing.T) {
	fcgi, err := ParseTarget("fcgi://127.0.0.1:9000/srv/index.php")
	if err != nil {
		t.Fatal(err)
	}
	http, err := ParseTarget("http://127.0.0.1:8080/")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		v    string
		t    Target
		want StatusSource
	}{
		{"/status", fcgi, StatusSource{"tcp", "127.0.0.1:9000", "/status"}},
		{"fcgi://127.0.0.1:9001/st", http, StatusSource{"tcp", "127.0.0.1:9001", "/st"}},
		{"unix:/run/php.sock:/st", http, StatusSource{"unix", "/run/php.sock", "/st"}},
	} {
		if got, err := ParseStatusSource(c.v, c.t); err != nil || *got != c.want {
			t.Errorf("%s on %s: %+v, %v; want %+v", c.v, c.t.Raw, got, err, c.want)
		}
	}
	for v, want := range map[string]string{"/status": "give the pool's address too", "http://x/": "want /PATH"} {
		if _, err := ParseStatusSource(v, http); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s on an HTTP target: %v, want an error with %q", v, err, want)
		}
	}
}

// TestBoundByPool: only a FastCGI run at a rate without --max-inflight, on a static pool, is bounded, at the
// pool's size.
func TestBoundByPool(t *testing.T) {
	fcgi, _ := ParseTarget("fcgi://127.0.0.1:9000/srv/index.php")
	http, _ := ParseTarget("http://127.0.0.1:8080/")
	static := &measure.FPMStatus{PM: "static", TotalProcesses: 5}
	dynamic := &measure.FPMStatus{PM: "dynamic", TotalProcesses: 5}
	for _, c := range []struct {
		name string
		o    Options
		st   *measure.FPMStatus
		want int
	}{
		{"static pool at a rate", Options{Target: fcgi, Rate: 100}, static, 5},
		{"--max-inflight given", Options{Target: fcgi, Rate: 100, MaxInflight: 2}, static, 2},
		{"closed model", Options{Target: fcgi}, static, 0},
		{"dynamic pool", Options{Target: fcgi, Rate: 100}, dynamic, 0},
		{"HTTP target", Options{Target: http, Rate: 100}, static, 0},
	} {
		BoundByPool(&c.o, c.st)
		if c.o.MaxInflight != c.want {
			t.Errorf("%s: MaxInflight %d, want %d", c.name, c.o.MaxInflight, c.want)
		}
	}
}

// TestNoteFPM: the pool's delta over the run goes into the result, with a warning for each way the pool capped it.
func TestNoteFPM(t *testing.T) {
	fcgi, _ := ParseTarget("fcgi://127.0.0.1:9000/srv/index.php")
	before := &measure.FPMStatus{Pool: "www", PM: "static", TotalProcesses: 4, AcceptedConn: 10, MaxListenQueue: 1}
	after := &measure.FPMStatus{Pool: "www", PM: "static", TotalProcesses: 4, AcceptedConn: 110, MaxChildrenReached: 2,
		MaxListenQueue: 3}
	r := &Result{Warnings: []string{"earlier"}}
	r.noteFPM(before, after, Options{Target: fcgi, Connections: 6})
	d, ok := r.FPMStatus.(measure.FPMDelta)
	if !ok || d.Accepted != 100 || d.MaxChildrenReached != 2 || d.ProcessesBefore != 4 {
		t.Fatalf("FPMStatus %+v, want the delta: 100 accepted, max_children reached twice, 4 workers before", r.FPMStatus)
	}
	want := []string{"earlier", "reached pm.max_children 2 time(s)", "6 connections > pm.max_children 4", "listen queue reached 3"}
	if len(r.Warnings) != len(want) {
		t.Fatalf("warnings %q, want %d", r.Warnings, len(want))
	}
	for i, w := range want {
		if !strings.Contains(r.Warnings[i], w) {
			t.Errorf("warning %d %q, want it to contain %q", i, r.Warnings[i], w)
		}
	}
	quiet := &Result{}
	quiet.noteFPM(before, before, Options{Target: fcgi, Connections: 4})
	if len(quiet.Warnings) != 0 {
		t.Errorf("a pool that kept up: warnings %q, want none", quiet.Warnings)
	}
}
