package k6

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/load"
)

// A run's progress is reported about twice a second with the requests so far and where the warm-up ends, and
// not after it is stopped; without a listener, nothing runs.
func TestProgress(t *testing.T) {
	var mu sync.Mutex
	var got []load.Progress
	o := &load.Options{Warmup: time.Hour, Duration: time.Hour, Progress: func(p load.Progress) {
		mu.Lock()
		got = append(got, p)
		mu.Unlock()
	}}
	var live atomic.Int64
	live.Store(7)
	stop := progress(o, &live, time.Now(), 2, 3)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n > 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	mu.Lock()
	defer mu.Unlock()
	if len(got) == 0 {
		t.Fatal("no progress in 10 s")
	}
	if p := got[0]; p.Requests != 7 || p.Trial != 2 || p.Trials != 3 || !p.Warmup || p.Total != 2*time.Hour {
		t.Errorf("progress %+v: want 7 requests, trial 2 of 3, warming up, 2h in all", p)
	}
	progress(&load.Options{}, &live, time.Now(), 1, 1)() // no listener: a stop that does nothing
}
