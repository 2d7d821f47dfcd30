package tune

import (
	"strconv"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/stats"
)

// TestSizeKept: a second look that sets the server keeps the pool's size the sizes' race chose after it, within
// the runtime's memory; any other knob's size is its own.
func TestSizeKept(t *testing.T) {
	tu := &tuner{runtimes: &runtimeRace{table: &Runtimes{List: []Runtime{{Server: knob.NginxFPM, Size: 4},
		{Server: knob.ApacheModPHP, Size: 4, MemoryLimit: 6}, {Server: knob.ApacheFPM, Size: 4}}}}}
	for _, c := range []struct {
		name, v    string
		best, want int
	}{
		{knob.ServerName, knob.ApacheFPM, 5, 5},
		{knob.ServerName, knob.ApacheModPHP, 5, 5},
		{knob.ServerName, knob.ApacheModPHP, 8, 6}, // within its memory
		{"pm", "static", 8, 4},
	} {
		tu.best.MaxChildren = c.best
		if got := tu.sizeKept(c.name, c.v, 4); got != c.want {
			t.Errorf("%s=%s with the pool at %d: size %d, want %d", c.name, c.v, c.best, got, c.want)
		}
	}
}

// TestASecondLookAtTheServerKeepsThePoolsSize: where the server's race, before the pool sizes', leaves mod_php
// open and a second look adopts it, the recommendation's size is the sizes' row's.
func TestASecondLookAtTheServerKeepsThePoolsSize(t *testing.T) {
	looked := 0
	for seed := int64(0); seed < 60; seed++ {
		so := demoSim(1300+seed, 0.04, 3*time.Minute)
		so.Plausible = 0.25 // pm, listen and keepalive raced at +-25%, which leaves the server's race open
		so.Knobs = knob.UnderServer([]knob.Knob{knob.Opcache(), knob.Server(""), knob.PM(), knob.Listen(), knob.Keepalive(), knob.MaxRequests()})
		so.Effect = Planted(map[string]map[string]float64{"server": {knob.ApacheModPHP: LogEffect(0.05)}})
		res, rows := simulated(t, so)
		if r := rows["server"]; secondLooked(r) && r.Verdict == stats.Better {
			looked++
		}
		if got := strconv.Itoa(res.Recommendation.MaxChildren); got != rows["max_children"].Value {
			t.Errorf("seed %d: max_children row %s, recommendation %s (%s)", seed, rows["max_children"].Value, got, res.Recommendation)
		}
	}
	t.Logf("60 runs: mod_php adopted in a second look in %d", looked)
	if looked == 0 {
		t.Errorf("no run adopted mod_php in a second look: the test shows nothing")
	}
}
