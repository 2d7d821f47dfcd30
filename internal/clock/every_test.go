package clock

import (
	"sync/atomic"
	"testing"
	"time"
)

// Every calls on until stopped, and never after: stop waits for the goroutine.
func TestEvery(t *testing.T) {
	var calls atomic.Int64
	stop := Every(time.Millisecond, func(time.Time) { calls.Add(1) })
	deadline := time.Now().Add(10 * time.Second)
	for calls.Load() < 3 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	stop()
	stop()
	n := calls.Load()
	if n < 3 {
		t.Fatalf("%d calls in 10 s at one a millisecond", n)
	}
	time.Sleep(20 * time.Millisecond)
	if m := calls.Load(); m != n {
		t.Errorf("%d calls after stop returned", m-n)
	}
}
