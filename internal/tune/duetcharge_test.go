package tune

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/experiment"
)

// gatedArm's trial lasts until its release, on a clock the test moves.
type gatedArm struct {
	release chan struct{}
}

func (a *gatedArm) Name() string                    { return "gated" }
func (a *gatedArm) Start(ctx context.Context) error { return nil }
func (a *gatedArm) Stop()                           {}
func (a *gatedArm) Trial(ctx context.Context) (experiment.Observation, error) {
	<-a.release
	return experiment.Observation{Value: 1}, nil
}

// TestADuetRoundIsChargedItsWallTime: two trials at once, the first to start ending last, are charged the round's
// wall time between them, not half again as much (charged at their start and end alone, the first saw itself
// both times and was charged in full).
func TestADuetRoundIsChargedItsWallTime(t *testing.T) {
	clock := &simClock{now: time.Unix(0, 0)}
	c := newCosts()
	first, second := &gatedArm{release: make(chan struct{})}, &gatedArm{release: make(chan struct{})}
	arms := []*timedArm{{Arm: first, c: c, clock: clock, metric: MetricCPU}, {Arm: second, c: c, clock: clock, metric: MetricCPU}}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); arms[0].Trial(context.Background()) }()
	for { // the first is in flight before the second starts
		c.mu.Lock()
		n := len(c.inFlight[MetricCPU])
		c.mu.Unlock()
		if n == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	wg.Add(1)
	go func() { defer wg.Done(); arms[1].Trial(context.Background()) }()
	for {
		c.mu.Lock()
		n := len(c.inFlight[MetricCPU])
		c.mu.Unlock()
		if n == 2 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	began := clock.Now()
	clock.add(500 * time.Millisecond)
	close(second.release)
	for {
		c.mu.Lock()
		done := c.trials[MetricCPU]
		c.mu.Unlock()
		if done == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	clock.add(500 * time.Millisecond)
	close(first.release)
	wg.Wait()
	wall := clock.Now().Sub(began)
	c.mu.Lock()
	charged := c.trialWall[MetricCPU]
	c.mu.Unlock()
	if charged > wall {
		t.Errorf("a duet round of %s charged %s", wall, charged)
	}
}
