package demostack

import (
	"context"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/measure"
	"github.com/phptune/phptune/internal/stack"
	"github.com/phptune/phptune/internal/workload"
)

// The demo preset's mix: pages of the app, each with a weight.
func TestMix(t *testing.T) {
	mix, err := Mix()
	if err != nil {
		t.Fatal(err)
	}
	if len(mix) < 2 {
		t.Fatalf("mix %+v: want the demo's pages", mix)
	}
	for _, m := range mix {
		if !strings.HasPrefix(m.URI, "/") || m.Weight < 1 {
			t.Errorf("mix item %+v: want a path and a positive weight", m)
		}
	}
}

// Start serves the demo on cfg's pool: every page of Mix answers 200 with the demo's marker, and a CPU trial of
// a fixed number of requests serves them all and reads php-fpm's CPU. Stop leaves no process of the stack and
// removes its private directory.
func TestStartServesTheDemo(t *testing.T) {
	if _, err := stack.FindPHPFPM(""); err != nil {
		t.Skipf("php-fpm is missing: %v", err)
	}
	if _, err := stack.FindNginx(""); err != nil {
		t.Skipf("nginx is missing: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := knob.Debian()
	cfg.PM, cfg.MaxChildren = "static", 2
	st, err := Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			st.Stop(context.Background())
		}
	})
	if p, ok := st.Pool("www"); !ok || p.PM != "static" || p.MaxChildren != 2 {
		t.Errorf("pools %+v: want www, static, 2 workers", st.Pools)
	}

	mix, err := Mix()
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: 10 * time.Second}
	for _, m := range mix {
		resp, err := client.Get(strings.TrimSuffix(st.HTTPURL, "/") + m.URI)
		if err != nil {
			t.Fatalf("GET %s: %v", m.URI, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "phptune-demo:") {
			t.Errorf("GET %s: status %d, body %.200q; want 200 with the demo's marker", m.URI, resp.StatusCode, body)
		}
	}
	client.CloseIdleConnections()

	tg, err := load.ParseTarget(st.HTTPURL)
	if err != nil {
		t.Fatal(err)
	}
	// Two connections, a cycle of the mix each: Even sends exactly that many.
	n := int64(2 * len(load.MixSequence(mix)))
	o := load.Options{Target: tg, Connections: 2, Requests: n, Even: true, Timeout: 10 * time.Second, Mix: mix,
		SkipPreflight: true}
	res, cpu, err := CPUTrial(ctx, st, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != n || res.Errors != 0 || cpu <= time.Microsecond {
		t.Errorf("CPU trial: %d requests, %d errors, php-fpm's CPU %v; want %d, none failed, some CPU",
			res.Requests, res.Errors, cpu, n)
	}

	groups := st.Groups()
	if groups["php-fpm"] == 0 || groups["nginx"] == 0 {
		t.Fatalf("process groups %v: want php-fpm's and nginx's", groups)
	}
	if n := len(inGroups(t, groups)); n < 4 {
		t.Errorf("%d processes before Stop: want php-fpm's master and 2 workers, and nginx", n)
	}
	stopped = true
	if err := st.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if left := inGroups(t, groups); len(left) > 0 {
		t.Errorf("processes left after Stop: %v", left)
	}
	if _, err := os.Stat(st.PrivDir); !os.IsNotExist(err) {
		t.Errorf("private directory %s after Stop: %v", st.PrivDir, err)
	}
}

// inGroups lists the processes in groups.
func inGroups(t *testing.T, groups map[string]int) []int {
	t.Helper()
	var out []int
	for _, g := range groups {
		pids, err := measure.ProcessGroup(g)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, pids...)
	}
	return out
}

// WithPreset passes an unknown preset's one-line error through (naming the nearest), and never calls f.
func TestWithPresetRefusesAnUnknownName(t *testing.T) {
	called := false
	err := WithPreset("wordpres", func(context.Context, *workload.App) error { called = true; return nil })
	if err == nil || !strings.Contains(err.Error(), "wordpress") || strings.Contains(err.Error(), "\n") || called {
		t.Errorf("WithPreset(wordpres) = %v (f called: %v), want one line naming wordpress, f not called", err, called)
	}
}
