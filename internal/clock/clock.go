// Package clock is the time a budget is kept by: the wall's, or a simulation's, which moves only when told, so
// that a simulated run's time shares are its rules' whatever the machine running it does; and a call every so
// often until stopped (Every).
package clock

import (
	"sync"
	"time"
)

// Clock tells the time.
type Clock interface {
	Now() time.Time
}

// Wall is the real clock.
type Wall struct{}

// Now is time.Now.
func (Wall) Now() time.Time { return time.Now() }

// Sim is a simulation's clock: it starts at the Unix epoch and moves by Add, and by its tick at every reading.
// A tick models a real clock's reading taking time: code that reads it twice and expects one answer then fails
// in a simulation as it does in a real run (tune's final claim, which read it twice, ra31). Safe for use by
// several goroutines.
type Sim struct {
	mu   sync.Mutex
	now  time.Time
	tick time.Duration
}

// NewSim is a simulation's clock that moves tick at every reading (0: only by Add).
func NewSim(tick time.Duration) *Sim {
	return &Sim{now: time.Unix(0, 0), tick: tick}
}

// Now reads the clock, moving it by its tick.
func (c *Sim) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(c.tick)
	return c.now
}

// Add moves the clock by d.
func (c *Sim) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}
