package main

import (
	"testing"
	"time"

	"github.com/phptune/phptune/internal/load"
)

// The keep-alive stack keeps tune's rendering (half the pool free over nginx's workers: max_children / (2 x
// workers), at least 1) or -keep's connections a worker; the other keeps none, -keep or not. Both are the demo on
// one static pool of -c workers, stopping fast.
func TestStackConfig(t *testing.T) {
	for _, c := range []struct {
		conc      int
		keep      bool
		perWorker int
		want      func(workers int) int
	}{
		{8, true, 0, func(w int) int { return max(1, 8/(2*w)) }},
		{1, true, 0, func(int) int { return 1 }},
		{8, true, 3, func(int) int { return 3 }},
		{8, false, 0, func(int) int { return 0 }},
		{8, false, 3, func(int) int { return 0 }},
	} {
		sc := stackConfig(c.conc, c.keep, c.perWorker)
		if sc.NginxWorkers < 1 {
			t.Fatalf("nginx's workers: %d", sc.NginxWorkers)
		}
		if want := c.want(sc.NginxWorkers); sc.NginxKeepalive != want {
			t.Errorf("pool %d, keep-alive %v, -keep %d: %d kept connections a worker (of %d), want %d",
				c.conc, c.keep, c.perWorker, sc.NginxKeepalive, sc.NginxWorkers, want)
		}
		if len(sc.Pools) != 1 || sc.Pools[0].PM != "static" || sc.Pools[0].MaxChildren != c.conc ||
			sc.NginxPool != sc.Pools[0].Name {
			t.Errorf("pools %+v (nginx's %q), want one static pool of %d behind nginx", sc.Pools, sc.NginxPool, c.conc)
		}
		if sc.AppFS == nil || sc.App != "" || !sc.FastStop {
			t.Errorf("app %q (embedded %v), fast stop %v: want the embedded demo, stopping fast",
				sc.App, sc.AppFS != nil, sc.FastStop)
		}
	}
}

// A trial with failed requests counts once, its requests all; the slowest trial is kept whatever failed.
func TestTallyAdd(t *testing.T) {
	var tl tally
	tl.add(&load.Result{Requests: 120}, 2*time.Second)
	tl.add(&load.Result{Requests: 120, Errors: 3}, time.Second)
	tl.add(&load.Result{Requests: 120, Errors: 4}, 5*time.Second)
	tl.add(&load.Result{Requests: 120}, 3*time.Second)
	if tl.failed != 2 || tl.errors != 7 || tl.slowest != 5*time.Second {
		t.Errorf("tally %+v, want 2 trials failed, 7 requests, slowest 5s", tl)
	}
}
