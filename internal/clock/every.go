package clock

import (
	"sync"
	"time"
)

// Every calls f with the time every d, from a goroutine of its own, until stop is called; stop returns once the
// goroutine has ended, so f is never called after it (a status line redrawn after it was cleared). Stop may be
// called more than once.
func Every(d time.Duration, f func(now time.Time)) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case now := <-t.C:
				f(now)
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			wg.Wait()
		})
	}
}
