package tune

import (
	"testing"
	"time"

	"github.com/phptune/phptune/internal/arms"
	"github.com/phptune/phptune/internal/clock"
	"github.com/phptune/phptune/internal/experiment"
	"github.com/phptune/phptune/internal/knob"
)

// specSource records the specs its arms were made with.
type specSource struct{ specs []arms.TrialSpec }

func (s *specSource) Arm(cfg knob.Config, spec arms.TrialSpec) experiment.Arm {
	s.specs = append(s.specs, spec)
	return nil
}

func (s *specSource) Hold(knob.Config)                              {}
func (s *specSource) Warm(knob.Config) bool                         { return false }
func (s *specSource) Fit([]knob.Config) bool                        { return true }
func (s *specSource) FinalSpread(func(string) bool) (float64, bool) { return 0, false }
func (s *specSource) StackOffset(string, string) arms.StackOffset   { return arms.StackOffset{} }
func (s *specSource) Tell(string, float64)                          {}

// TestDuetOnlyWhereTheArmsFitTogether: a CPU race runs duet rounds only where its arms' stacks fit the memory
// loaded at once (a 600 MiB container whose pool is sized to fill it would meet the OOM killer): the gate's
// weights decide, and a goodput race never runs duets.
func TestDuetOnlyWhereTheArmsFitTogether(t *testing.T) {
	s := arms.New(arms.Config{}, &arms.Lengths{}, nil, nil)
	s.Limit(600<<20, func(c knob.Config) int64 { return int64(c.MaxChildren) * 80 << 20 })
	for _, c := range []struct {
		children int
		metric   string
		want     bool
	}{{2, MetricCPU, true}, {3, MetricCPU, true}, {4, MetricCPU, false}, {2, MetricGoodput, false}} {
		src := &specSource{}
		d := &decider{src: src, costs: newCosts(), clock: clock.Wall{}, duet: true, fit: s.Fit}
		from := knob.Debian()
		from.MaxChildren = c.children
		if _, err := d.arms(race{knob: knob.MaxRequests(), from: from, values: []string{"100"}, spec: arms.TrialSpec{Metric: c.metric}}); err != nil {
			t.Fatal(err)
		}
		for _, s := range src.specs {
			if s.Duet != c.want {
				t.Errorf("%d children of 80 MiB, two arms in 600 MiB, %s: duet %v, want %v", c.children, c.metric, s.Duet, c.want)
			}
		}
	}
}

// TestSplitRoundsWhereTheyAreFair: with split rounds on (Options.Split), a goodput race's arms run them where their
// stacks fit the memory loaded together, but the pool sizes' and keep-alive's never (Splits), nor a CPU race's;
// off, none does.
func TestSplitRoundsWhereTheyAreFair(t *testing.T) {
	s := arms.New(arms.Config{}, &arms.Lengths{}, nil, nil)
	s.Limit(600<<20, func(c knob.Config) int64 { return int64(c.MaxChildren) * 80 << 20 })
	for _, c := range []struct {
		k        knob.Knob
		value    string
		split    bool
		children int
		want     bool
	}{
		{knob.Listen(), "tcp", true, 2, true}, {knob.PM(), "static", true, 2, true}, {knob.Listen(), "tcp", true, 4, false},
		{knob.Keepalive(), "on", true, 2, false}, {knob.MaxChildren(), "4", true, 2, false},
		{knob.JIT(), "tracing", true, 2, false}, {knob.Listen(), "tcp", false, 2, false},
		{knob.Server(""), knob.ApacheFPM, true, 2, true},
	} {
		tu, err := newTuner(Options{Base: knob.Debian(), Knobs: knob.All("", nil), Budget: 3 * time.Minute, Split: c.split})
		if err != nil {
			t.Fatal(err)
		}
		src := &specSource{}
		d := &decider{src: src, costs: newCosts(), clock: clock.Wall{}, fit: s.Fit}
		from := knob.Debian()
		from.MaxChildren = c.children
		if _, err := d.arms(race{knob: c.k, from: from, values: []string{c.value}, spec: tu.specOf(c.k)}); err != nil {
			t.Fatal(err)
		}
		for _, sp := range src.specs {
			if sp.Split != c.want {
				t.Errorf("%s, split rounds %v, %d children of 80 MiB: split %v, want %v", c.k.Name, c.split, c.children, sp.Split, c.want)
			}
		}
	}
}
