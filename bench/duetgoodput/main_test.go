package main

import (
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/phptune/phptune/bench/internal/capture"
	"github.com/phptune/phptune/internal/knob"
)

// The two pools are Debian's made static of -pool workers, each with the knob at its own value; an unknown knob or
// a value the knob refuses is an error naming it.
func TestConfigs(t *testing.T) {
	cfgs, err := configs("listen", "unix", "tcp", 6)
	if err != nil {
		t.Fatal(err)
	}
	for i, listen := range []string{"unix", "tcp"} {
		want := knob.Debian()
		want.PM, want.MaxChildren, want.Listen = "static", 6, listen
		if !reflect.DeepEqual(cfgs[i], want) {
			t.Errorf("pool %d: %s, want %s", i+1, cfgs[i], want)
		}
	}
	for _, c := range []struct{ name, a, b, want string }{
		{"no-such-knob", "1", "1", `-knob "no-such-knob"`},
		{"listen", "udp", "unix", "listen=udp"},
		{"listen", "unix", "pipe", "listen=pipe"},
	} {
		if _, err := configs(c.name, c.a, c.b, 4); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("configs(%s, %s, %s): %v, want an error with %q", c.name, c.a, c.b, err, c.want)
		}
	}
}

// A round's ratios are the second pool's over the first's, on the log scale.
func TestRatiosAdd(t *testing.T) {
	var r ratios
	r.add([2]figures{{goodput: 100, capacity: 50}, {goodput: 200, capacity: 25}})
	if len(r.goodput) != 1 || math.Abs(r.goodput[0]-math.Ln2) > 1e-12 || math.Abs(r.capacity[0]+math.Ln2) > 1e-12 {
		t.Errorf("ratios %+v, want goodput [ln 2], capacity [-ln 2]", r)
	}
}

// Alternating rounds of +-1% and +-3%: mean 0, sd sqrt(20/3)% = 2.58%, se over 4 rounds 1.29%; duet rounds of 1.5%
// and 2.5%: mean 2%, sd 0.58%, se 0.29%. The duet's sd is sqrt(0.05) = 0.22 of the alternating's; the means differ
// by 2% with an se of hypot(1.29, 0.29) = 1.32%.
func TestReport(t *testing.T) {
	alt := []float64{0.01, -0.01, 0.03, -0.03}
	du := []float64{0.015, 0.025, 0.015, 0.025}
	out := capture.Stdout(t, func() { report("goodput", 4, alt, du) })
	rows := map[string][]string{}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) == 4 {
			rows[f[0]] = f[1:]
		}
	}
	for name, want := range map[string][]string{
		"goodput":     {"mean", "+-se", "sd"},
		"alternating": {"0.00%", "1.29%", "2.58%"},
		"duet":        {"2.00%", "0.29%", "0.58%"},
	} {
		if !slices.Equal(rows[name], want) {
			t.Errorf("row %s: %v, want %v\n%s", name, rows[name], want, out)
		}
	}
	if want := "duet's sd 0.22 x alternating's; the means differ by 2.00% (+-1.32%)\n"; !strings.HasSuffix(out, want) {
		t.Errorf("last line: want %q in\n%s", want, out)
	}
}

// The split reads capacity from the duet rounds and the share from the alternating ones: alternating rounds of
// goodput +4% and 0% with capacity +1% and +1% have shares of +3% and -1%; duet capacities of +2% and +2% make the
// split +5% and +1%, mean 3%, sd 2.83%, where the alternating goodput's sd is 2.83% too; the split less the
// alternating goodput is the duet's capacity less the alternating's, +1% each round.
func TestReportSplit(t *testing.T) {
	alt := ratios{goodput: []float64{0.04, 0}, capacity: []float64{0.01, 0.01}, share: []float64{0.03, -0.01}}
	du := ratios{goodput: []float64{0, 0}, capacity: []float64{0.02, 0.02}, share: []float64{-0.02, -0.02}}
	out := capture.Stdout(t, func() { reportSplit(2, alt, du) })
	for _, want := range []string{
		"goodput split (duet capacity + alternating share): mean 3.00% (+-2.00%), sd 2.83%\n",
		"split's sd 1.00 x alternating goodput's; the means differ by 1.00% (+-0.00%)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q in\n%s", want, out)
		}
	}
}
