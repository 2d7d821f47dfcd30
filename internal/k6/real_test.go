package k6

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/stack"
)

// k6Binary is the k6 that make k6 builds; the real tests need it and say how to get it.
func k6Binary(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	p := filepath.Join(filepath.Dir(file), "..", "..", "bin", "k6")
	if !isExec(p) {
		t.Fatalf("%s missing: build it with make k6 (make test does)", p)
	}
	return p
}

// startNginx serves a page that takes about 2 ms (nginx in front of php-fpm, as phptune serves an app).
func startNginx(t *testing.T) load.Target {
	t.Helper()
	app := t.TempDir()
	page := `<?php usleep(2000); echo "hello from php";`
	if err := os.WriteFile(filepath.Join(app, "index.php"), []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := stack.Start(ctx, stack.Config{App: app})
	if err != nil {
		t.Fatalf("start nginx and php-fpm (make deps): %v", err)
	}
	t.Cleanup(func() { s.Stop(context.Background()) })
	tg, err := load.ParseTarget(s.HTTPURL)
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

func checked(t *testing.T, o load.Options) *load.Runner {
	t.Helper()
	r, err := load.NewRunner(o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Two local instances split one test by execution segments: with -n the merged count is exactly the test's,
// each instance sending its half; with -d the window's requests, none of them failed by the window's end.
func TestTwoInstancesAgainstNginx(t *testing.T) {
	bin := k6Binary(t)
	tg := startNginx(t)
	e := &Engine{Binary: bin, Instances: 2}
	o := load.Options{Target: tg, Connections: 4, Requests: 400, Warmup: 200 * time.Millisecond, Timeout: 5 * time.Second,
		Request: load.Request{Method: "GET", KeepAlive: true}, ExpectBody: regexp.MustCompile(`hello`), Engine: e}
	res, err := checked(t, o).Trial(context.Background(), 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 400 || res.Errors != 0 {
		t.Fatalf("requests %d errors %d %v, want 400 without error", res.Requests, res.Errors, res.ErrorSamples)
	}
	if res.Latency.P50 < 2000 || res.Latency.P99 < res.Latency.P50 || res.RPS <= 0 || res.ClientCPUUsPerReq <= 0 {
		t.Errorf("latency %+v rps %.0f cpu/req %.0f us", res.Latency, res.RPS, res.ClientCPUUsPerReq)
	}

	o.Requests, o.Duration = 0, time.Second
	res, err = checked(t, o).Trial(context.Background(), 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	// Four connections at about 2-3 ms a request: hundreds in the second; the window's end interrupts the
	// requests in flight, which must not count as failures.
	if res.Requests < 100 || res.Errors != 0 || res.DurationS != 1 {
		t.Errorf("window: %d requests, %d errors %v, %.3f s", res.Requests, res.Errors, res.ErrorSamples, res.DurationS)
	}
	for _, w := range res.Warnings {
		t.Logf("warning: %s", w)
	}

	// A content marker that is missing: every response an error of class body.
	o.ExpectBody = regexp.MustCompile(`(?i)NOT ON THE PAGE`)
	res, err = checked(t, o).Trial(context.Background(), 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests == 0 || res.ErrorsByClass[load.ClassBody] != res.Requests {
		t.Errorf("body check: %d requests, errors %v", res.Requests, res.ErrorsByClass)
	}
}

// A cancelled trial stops k6 at once and keeps what it measured.
func TestCancelKeepsThePoints(t *testing.T) {
	bin := k6Binary(t)
	tg := startNginx(t)
	o := load.Options{Target: tg, Connections: 2, Duration: time.Minute, Timeout: 5 * time.Second,
		Request: load.Request{Method: "GET", KeepAlive: true}, Engine: &Engine{Binary: bin, Instances: 1}}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	t0 := time.Now()
	res, err := checked(t, o).Trial(ctx, 1, 1)
	if took := time.Since(t0); took > 15*time.Second {
		t.Errorf("cancel took %s", took)
	}
	if err == nil || res == nil || !res.Partial || res.Requests == 0 {
		t.Fatalf("err %v partial result %+v", err, res)
	}
}
