package ctxwatch

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

type conn struct{ interrupted atomic.Int32 }

func TestInterruptsActiveOnly(t *testing.T) {
	w := New(func(c *conn) { c.interrupted.Add(1) })
	ctx, cancel := context.WithCancel(context.Background())
	w.Follow(ctx)
	idle, busy := &conn{}, &conn{}
	if w.Begin(idle) {
		t.Fatal("Begin reported cancelled before cancel")
	}
	if w.End() {
		t.Fatal("End reported cancelled before cancel")
	}
	if w.Begin(busy) {
		t.Fatal("Begin reported cancelled")
	}
	cancel()
	deadline := time.Now().Add(time.Second)
	for busy.interrupted.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if busy.interrupted.Load() != 1 || idle.interrupted.Load() != 0 {
		t.Fatalf("interrupted busy %d idle %d, want 1 and 0", busy.interrupted.Load(), idle.interrupted.Load())
	}
	if !w.End() {
		t.Error("End after cancel did not report it")
	}
	if !w.Begin(idle) {
		t.Error("Begin after cancel did not refuse")
	}
	w.Release()
}

func TestStaleContextDoesNotInterrupt(t *testing.T) {
	w := New(func(c *conn) { c.interrupted.Add(1) })
	old, cancelOld := context.WithCancel(context.Background())
	w.Follow(old)
	w.Follow(context.Background()) // the client moved on
	c := &conn{}
	w.Begin(c)
	cancelOld()
	time.Sleep(20 * time.Millisecond)
	if c.interrupted.Load() != 0 {
		t.Fatal("a context no longer followed interrupted the exchange")
	}
	w.End()
	w.Release()
}

func TestFollowSameContextDoesNotAllocate(t *testing.T) {
	w := New(func(c *conn) {})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := &conn{}
	w.Follow(ctx)
	if n := testing.AllocsPerRun(100, func() { w.Follow(ctx); w.Begin(c); w.End() }); n != 0 {
		t.Fatalf("%v allocations per exchange", n)
	}
	w.Release()
}
