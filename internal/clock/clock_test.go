package clock

import (
	"sync"
	"testing"
	"time"
)

// A simulation's clock moves by what it is told and by its tick at each reading, from any goroutine.
func TestSim(t *testing.T) {
	c := NewSim(time.Microsecond)
	start := c.Now()
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.Add(time.Second)
		}()
	}
	wg.Wait()
	if got := c.Now().Sub(start); got != 10*time.Second+time.Microsecond {
		t.Errorf("after 10 s added and a reading: %s, want 10.000001s", got)
	}
	still := NewSim(0)
	if a, b := still.Now(), still.Now(); !a.Equal(b) || !a.Equal(time.Unix(0, 0)) {
		t.Errorf("a clock without a tick read %s then %s, want the epoch twice", a, b)
	}
	var _ Clock = Wall{}
	if d := time.Since(Wall{}.Now()); d < 0 || d > time.Minute {
		t.Errorf("the wall clock is %s from time.Now", d)
	}
}
