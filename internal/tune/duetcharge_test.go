package tune

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/clock"
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
	clk := clock.NewSim(time.Microsecond)
	c := newCosts()
	first, second := &gatedArm{release: make(chan struct{})}, &gatedArm{release: make(chan struct{})}
	arms := []*timedArm{{Arm: first, c: c, clock: clk, metric: MetricCPU}, {Arm: second, c: c, clock: clk, metric: MetricCPU}}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); arms[0].Trial(context.Background()) }()
	inFlight := func(n int) func(*costs) bool { return func(c *costs) bool { return len(c.inFlight[MetricCPU]) == n } }
	c.await(inFlight(1)) // the first is in flight before the second starts
	wg.Add(1)
	go func() { defer wg.Done(); arms[1].Trial(context.Background()) }()
	c.await(inFlight(2))
	began := clk.Now()
	clk.Add(500 * time.Millisecond)
	close(second.release)
	c.await(func(c *costs) bool { return c.trials[MetricCPU] == 1 })
	clk.Add(500 * time.Millisecond)
	close(first.release)
	wg.Wait()
	wall := clk.Now().Sub(began)
	c.mu.Lock()
	charged := c.trialWall[MetricCPU]
	c.mu.Unlock()
	if charged > wall {
		t.Errorf("a duet round of %s charged %s", wall, charged)
	}
}

// await waits until ok holds of c, read under its lock.
func (c *costs) await(ok func(*costs) bool) {
	for {
		c.mu.Lock()
		done := ok(c)
		c.mu.Unlock()
		if done {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// TestASplitTrialIsChargedWithoutCounting: a split round's duet trial charges its time to the trials of its
// kind without counting one, so that a trial costs its round's share: three trials of 0.4 s, each with its share
// of a duet, 0.2 s, cost 0.6 s each.
func TestASplitTrialIsChargedWithoutCounting(t *testing.T) {
	clk := clock.NewSim(time.Microsecond)
	c := newCosts()
	a := &timedArm{Arm: &clockedArm{clk: clk, took: 400 * time.Millisecond}, c: c, clock: clk, metric: "goodput+split"}
	for range 3 {
		a.Arm.(*clockedArm).took = 400 * time.Millisecond
		if _, err := a.Trial(context.Background()); err != nil {
			t.Fatal(err)
		}
		a.Arm.(*clockedArm).took = 200 * time.Millisecond
		if _, err := a.SplitTrial(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := c.trial("goodput+split"), 600*time.Millisecond; got < want || got > want+time.Millisecond {
		t.Errorf("a trial costs %s, want %s", got, want)
	}
}

// clockedArm's trial takes took on its clock.
type clockedArm struct {
	clk  *clock.Sim
	took time.Duration
}

func (a *clockedArm) Name() string                    { return "clocked" }
func (a *clockedArm) Start(ctx context.Context) error { return nil }
func (a *clockedArm) Stop()                           {}
func (a *clockedArm) Trial(ctx context.Context) (experiment.Observation, error) {
	a.clk.Add(a.took)
	return experiment.Observation{Value: 1}, nil
}
