package measure_test

import (
	"context"
	"strings"
	"testing"
	"time"

	. "github.com/phptune/phptune/internal/measure"
	"github.com/phptune/phptune/internal/stack"
	"github.com/phptune/phptune/workloads"
)

func TestReadFPMStatusFromRealPool(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := stack.Start(ctx, stack.Config{AppFS: workloads.Demo(), NoNginx: true,
		Pools: []stack.Pool{{Name: "st", Listen: stack.ListenUnix, PM: "static", MaxChildren: 3}}})
	if err != nil {
		t.Fatalf("start stack (needs php8.2-fpm: make deps): %v", err)
	}
	defer s.Stop(context.Background())
	ep := s.Pools[0]
	before, err := ReadFPMStatus(ctx, ep.Network, ep.Address, ep.StatusPath)
	if err != nil {
		t.Fatal(err)
	}
	if before.Pool != "st" || before.PM != "static" || before.Workers() != 3 {
		t.Fatalf("status %+v", before)
	}
	// The reading worker is itself "Running"; the others idle (Stack.Start waits for a static pool's workers), or,
	// on a busy machine, still "Reading headers" of a connection that Stack.Start's readiness checks closed.
	if st := before.States(); st["Idle"]+st["Finishing"]+st["Reading headers"] != 2 || st["Running"] != 1 {
		t.Errorf("states %v", st)
	}
	after, err := ReadFPMStatus(ctx, ep.Network, ep.Address, ep.StatusPath)
	if err != nil {
		t.Fatal(err)
	}
	d := Delta(before, after)
	// One status read on a kept connection counts as one or two request reads in "accepted conn", depending on
	// whether its worker has seen the close yet (and the first read's close may land in this window too).
	if d.Accepted < 1 || d.Accepted > 3 || d.ProcessesAfter != 3 || d.MaxChildrenReached != 0 {
		t.Errorf("delta %+v: want 2 accepted (the second read) and 3 workers", d)
	}
	if _, err := ReadFPMStatus(ctx, ep.Network, ep.Address, "/not-the-status"); err == nil || !strings.Contains(err.Error(), "pm.status_path") {
		t.Errorf("wrong path: err %v, want a hint about pm.status_path", err)
	}
}
