package arms

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/knob"
)

// TestStartsWaitWhenTogetherTheyWouldNotFit: stacks started side by side (a race's arms, the sizes', moves,
// the final) start together only as far as their workers at their peak fit in the memory the pool may use;
// one that alone exceeds it starts alone; with room for all, all start at once; a cancelled wait is an error.
func TestStartsWaitWhenTogetherTheyWouldNotFit(t *testing.T) {
	const mib = 1 << 20
	need := func(c knob.Config) int64 { return 18*mib + int64(c.MaxChildren)*42*mib }
	starts := func(limit int64, sizes ...int) (peak int64, together int) {
		var g startGate
		g.limit(limit, need)
		var mu sync.Mutex
		var in int64
		var now int
		var wg sync.WaitGroup
		for _, n := range sizes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := knob.Debian()
				c.MaxChildren = n
				leave, err := g.enter(context.Background(), c)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				in, now = in+need(c), now+1
				if now > 1 {
					peak = max(peak, in)
				}
				together = max(together, now)
				mu.Unlock()
				time.Sleep(20 * time.Millisecond)
				mu.Lock()
				in, now = in-need(c), now-1
				mu.Unlock()
				leave()
			}()
		}
		wg.Wait()
		return peak, together
	}
	// 1, 2, 4 and 8 workers of 42 MiB (15, and four pools' shared memory: 702 MiB) do not fit 566 MiB together;
	// 20 (858 MiB) does not fit at all.
	if peak, _ := starts(566*mib, 1, 2, 4, 8, 20); peak > 566*mib {
		t.Errorf("starts side by side needed %d MiB at once in 566 MiB", peak/mib)
	}
	if _, together := starts(24<<30, 1, 2, 4, 8, 20); together != 5 {
		t.Errorf("24 GiB: %d of 5 starts side by side, want all", together)
	}
	if _, together := starts(0, 1, 2, 4, 8, 20); together != 5 {
		t.Errorf("no limit known: %d of 5 starts side by side, want all", together)
	}

	var g startGate
	g.limit(100*mib, need)
	c := knob.Debian()
	c.MaxChildren = 1
	leave, err := g.enter(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	defer leave()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := g.enter(ctx, c); err == nil {
		t.Error("a start that cannot fit beside another did not wait")
	}
}
