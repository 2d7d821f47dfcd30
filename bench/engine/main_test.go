package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/bench/internal/capture"
	"github.com/phptune/phptune/internal/arms"
	"github.com/phptune/phptune/internal/experiment"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/stats"
	"github.com/phptune/phptune/internal/tune"
)

// The rows of simulated runs: offsets none, half and whole, one stack an arm or moving, told or not; with duet
// rounds' noise, the duet rows beside alternating ones at twice the offsets; -duet keeps those and the last
// alternating row.
func TestTuneRows(t *testing.T) {
	s := setup{replay: experiment.ReplayOptions{StackSD: 0.02, NewStackEvery: 5}}
	alternating := []tuneRow{{sd: 0}, {sd: 0.01}, {sd: 0.01, told: true}, {sd: 0.02}, {sd: 0.02, told: true},
		{sd: 0.02, every: 5}, {sd: 0.02, every: 5, told: true}}
	duets := []tuneRow{{sd: 0.02, every: 5, told: true, duet: true, duetSD: 0},
		{sd: 0.02, every: 5, told: true, duet: true, duetSD: 0.02},
		{sd: 0.02, every: 5, told: true, duet: true, duetSD: 0.04},
		{sd: 0.04, every: 5, told: true},
		{sd: 0.04, every: 5, told: true, duet: true, duetSD: 0.04}}
	for _, c := range []struct {
		duet, duetOnly bool
		want           []tuneRow
	}{
		{false, false, alternating},
		{true, false, slices.Concat(alternating, duets)},
		{true, true, slices.Concat(alternating[6:], duets)},
		{false, true, alternating[6:]},
	} {
		if got := tuneRows(s, c.duet, c.duetOnly); !slices.Equal(got, c.want) {
			t.Errorf("tuneRows(duet %v, duetOnly %v) =\n %+v\nwant\n %+v", c.duet, c.duetOnly, got, c.want)
		}
	}
}

// A round of two arms costs two trials, and a share of a start when the arms move; a duet round its two trials
// at once or the next round's starts beside them, whichever is longer.
func TestRoundCost(t *testing.T) {
	s := setup{goodputTrial: 400 * time.Millisecond, cpuTrial: 300 * time.Millisecond,
		duetTrial: 800 * time.Millisecond, start: 4 * time.Second, twinStart: time.Second,
		replay: experiment.ReplayOptions{NewStackEvery: 5}, told: true}
	fixed := s
	fixed.told = false
	never := s
	never.replay.NewStackEvery = 0
	for _, c := range []struct {
		name string
		m    string
		s    setup
		want time.Duration
	}{
		{"duet", duetKey, s, max(1600*time.Millisecond, tune.StartsCost(2, time.Second))},
		{"goodput moving", tune.MetricGoodput, s, 800*time.Millisecond + tune.StartsCost(2, 4*time.Second)/5},
		{"static goodput moving", staticKey, s, 800*time.Millisecond + tune.StartsCost(2, time.Second)/5},
		{"CPU moving", tune.MetricCPU, s, 600*time.Millisecond + tune.StartsCost(2, time.Second)/5},
		{"goodput, not told", tune.MetricGoodput, fixed, 800 * time.Millisecond},
		{"CPU, not told", tune.MetricCPU, fixed, 600 * time.Millisecond},
		{"goodput, one stack", tune.MetricGoodput, never, 800 * time.Millisecond},
	} {
		if got := roundCost(c.m, c.s); got != c.want {
			t.Errorf("%s: roundCost = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestSmallHelpers(t *testing.T) {
	if pct(1, 4) != 25 || pct(3, 0) != 300 || pct(0, 0) != 0 {
		t.Errorf("pct: 1 of 4 %v, 3 of 0 %v (counted as of 1), 0 of 0 %v", pct(1, 4), pct(3, 0), pct(0, 0))
	}
	if b2i(true) != 1 || b2i(false) != 0 {
		t.Error("b2i")
	}
	if median(nil) != 0 || median([]float64{3, 1, 2}) != 2 {
		t.Errorf("median: of nothing %v, of 3 1 2 %v", median(nil), median([]float64{3, 1, 2}))
	}
	for v, want := range map[stats.Verdict]bool{stats.Better: true, stats.Worse: true, stats.NoDifference: true,
		stats.Inconclusive: false, stats.Error: false, tune.NonInferior: false, "": false} {
		if decided(v) != want {
			t.Errorf("decided(%q) = %v", v, !want)
		}
	}
}

// Three simulated runs scored by hand:
//   - A: opcache off shown worse (truth -44%, inside its interval); pm, which has no effect, shown better (a false
//     verdict on a null knob, its interval missing 0); keepalive on (truth +5%) no_difference at a minimum effect
//     of 2% (a wrong no_difference); a comparison of one round, left out. Its knobs: opcache kept on after 9
//     rounds, the JIT's tracing and keep-alive on found, preload off kept worse, pm a null no_difference,
//     max_requests inconclusive, listen not raced; two of them CPU races.
//   - B: keep-alive on recommended (truth +5% against Debian's) but its final on goodput says worse: a false
//     final; on capacity better, decided.
//   - C: the recommendation is the starting point: decided without a race.
func TestScore(t *testing.T) {
	so := tune.SimOptions{Base: knob.Debian(), Effect: tune.Planted(planted), MinEffect: 0.02}
	if e := so.Effect(knob.Debian(), tune.MetricGoodput); e != 0 {
		t.Fatalf("Debian's configuration carries a planted effect %v: the truths below assume none", e)
	}
	cmp := func(n int, v stats.Verdict, lo, hi float64) stats.Comparison {
		return stats.Comparison{N: n, Verdict: v, LogLo: lo, LogHi: hi}
	}
	a := &tune.Result{ElapsedS: 120,
		Comparisons: []tune.Comparison{
			{Knob: "opcache", A: "on", B: "off", Stats: cmp(10, stats.Worse, math.Log(0.5), math.Log(0.6))},
			{Knob: "pm", A: "dynamic", B: "static", Stats: cmp(8, stats.Better, 0.01, 0.05)},
			{Knob: "keepalive", A: "off", B: "on", Stats: cmp(12, stats.NoDifference, -0.01, 0.06)},
			{Knob: "jit", A: "off", B: "function", Stats: cmp(1, stats.Worse, -1, -0.5)},
		},
		Knobs: []tune.KnobRow{
			{Name: "opcache", Value: "on", Verdict: stats.Worse, Rounds: 9, Metric: tune.MetricCPU},
			{Name: "jit", Value: "tracing", Verdict: stats.Better, Rounds: 4, Metric: tune.MetricCPU},
			{Name: "preload", Value: "off", Verdict: stats.Worse, Rounds: 3, Metric: tune.MetricGoodput},
			{Name: "keepalive", Value: "on", Verdict: stats.Better, Rounds: 6, Metric: tune.MetricGoodput},
			{Name: "pm", Value: "dynamic", Verdict: stats.NoDifference, Rounds: 5, Metric: tune.MetricGoodput},
			{Name: "max_requests", Value: "0", Verdict: stats.Inconclusive, Rounds: 7, Metric: tune.MetricGoodput},
			{Name: "listen", Value: "unix"},
		}}
	rec := knob.Debian()
	rec.Keepalive = true
	vsDebian, capacity := cmp(6, stats.Worse, -0.1, -0.01), cmp(6, stats.Better, 0.02, 0.08)
	b := &tune.Result{ElapsedS: 60, Recommendation: rec,
		Headline: &tune.Headline{VsDebian: &vsDebian, CapacityVsDebian: &capacity}}
	c := &tune.Result{ElapsedS: 30, Recommendation: knob.Debian(), Headline: &tune.Headline{Same: true}}
	sc := &score{runs: 3}
	for _, r := range []*tune.Result{a, b, c} {
		sc.add(r, so)
	}
	for _, f := range []struct {
		name      string
		got, want int
	}{
		{"false anywhere", sc.falseAny, 2}, {"false on a null knob", sc.falseNull, 1},
		{"false final", sc.falseFinal, 1},
		{"wrong no_difference", sc.wrongNoDiff, 1}, {"all covered", sc.covered, 1},
		{"JIT tracing", sc.jit, 1}, {"JIT any", sc.jitAny, 1}, {"preload", sc.preload, 1}, {"5% found", sc.five, 1},
		{"opcache", sc.opcache, 1}, {"null raced", sc.nullRaced, 2}, {"null no_difference", sc.nullNoDf, 1},
		{"capacity decided", sc.capacity, 2}, {"goodput decided", sc.goodput, 2},
		{"raced", sc.raced, 6}, {"decided", sc.decided, 5},
		{"CPU raced", sc.cpuRaced, 2}, {"CPU decided", sc.cpuDecided, 2},
	} {
		if f.got != f.want {
			t.Errorf("%s: %d, want %d", f.name, f.got, f.want)
		}
	}
	if !slices.Equal(sc.opRounds, []float64{9}) || sc.elapsed != 210 {
		t.Errorf("opcache's rounds %v, elapsed %v; want [9], 210", sc.opRounds, sc.elapsed)
	}
	// The row states the counts per run: 2 of 3 is 66.7%, 1 of 3 33.3%, null no_difference 1 of 2 raced.
	s := setup{replay: experiment.ReplayOptions{StackSD: 0.02, NewStackEvery: 5}, told: true}
	cols := strings.Split(sc.row(3*time.Minute, s), "|")
	want := [][]string{
		{"3m0s", "2.0%", fmt.Sprintf("<=%d/%d", arms.PerStack(arms.MetricCPU), arms.PerStack(arms.MetricGoodput)),
			"yes"},
		{"66.7%", "33.3%", "33.3%"}, {"33.3%"}, {"33.3%"}, {"33.3%", "33.3%"}, {"33.3%"}, {"33.3%"}, {"33.3%,", "9"},
		{"50.0%"}, {"66.7%", "66.7%"}, {"70"}, {"1.7/", "2.0", "(0.7/0.7)"},
	}
	if len(cols) != len(want) {
		t.Fatalf("row has %d columns, want %d: %q", len(cols), len(want), cols)
	}
	for i, col := range cols {
		if f := strings.Fields(col); !slices.Equal(f, want[i]) {
			t.Errorf("column %d: %q, want %q", i, f, want[i])
		}
	}
	s.duet, s.duetSD = true, 0.04
	if f := strings.Fields(strings.Split(sc.row(time.Minute, s), "|")[0]); f[2] != "duet:4%" {
		t.Errorf("a duet row's stacks: %q, want duet:4%%", f)
	}
}

// The noise files: goodput's and CPU's are needed, static pools' and duet rounds' optional (older recordings).
func TestLoadNoise(t *testing.T) {
	dir := t.TempDir()
	for _, m := range []string{tune.MetricGoodput, tune.MetricCPU} {
		data, err := os.ReadFile(filepath.Join("..", "..", "internal", "experiment", "testdata", "noise-"+m+".json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "noise-"+m+".json"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var noise map[string]experiment.Noise
	var err error
	out := capture.Stdout(t, func() { noise, err = loadNoise(dir) })
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k, n := range noise {
		keys = append(keys, k)
		if len(n.Rounds) == 0 {
			t.Errorf("%s: no rounds", k)
		}
	}
	slices.Sort(keys)
	if want := []string{tune.MetricGoodput, tune.MetricCPU}; !slices.Equal(keys, want) {
		t.Errorf("noises %v, want %v", keys, want)
	}
	if !strings.Contains(out, "noise "+tune.MetricGoodput) {
		t.Errorf("loadNoise did not say where goodput's noise is from:\n%s", out)
	}
	if err := os.Remove(filepath.Join(dir, "noise-"+tune.MetricCPU+".json")); err != nil {
		t.Fatal(err)
	}
	capture.Stdout(t, func() { _, err = loadNoise(dir) })
	if err == nil {
		t.Error("no CPU noise: no error")
	}
}

// part applies its function to every noise: Held keeps the rounds of the runs that did not choose the parameters.
func TestPart(t *testing.T) {
	n := experiment.Noise{Rounds: [][]float64{{1, 2}, {3, 4}, {5, 6}},
		Runs: []experiment.NoiseRun{{Source: "a", From: 0, Tuning: true}, {Source: "b", From: 1}}}
	got := part(map[string]experiment.Noise{"x": n, "y": n}, experiment.Noise.Held)
	for _, k := range []string{"x", "y"} {
		if r := got[k].Rounds; len(got) != 2 || len(r) != 2 || r[0][0] != 3 || r[1][0] != 5 {
			t.Errorf("part %s: %v, want the rounds from 1 on", k, r)
		}
	}
}

// -extract writes each metric's rounds (keyed by the trial's pm and duet), in the order the trials began whatever
// their order in the file; phases other than knobs' and the final's are left out.
func TestExtractNoise(t *testing.T) {
	type rec = tune.TrialRecord
	const off, on = "pm=static max_children=4 jit=off", "pm=static max_children=4 jit=tracing"
	trials := []rec{ // listed last first
		{Phase: "final", Config: "pm=dynamic max_children=5", RPS: 200, AtS: 10},
		{Phase: "final", Config: "pm=ondemand max_children=5", RPS: 100, AtS: 9},
		{Phase: "final", Config: "pm=dynamic max_children=5", RPS: 200, AtS: 8},
		{Phase: "final", Config: "pm=ondemand max_children=5", RPS: 100, AtS: 7},
		{Phase: "knob jit", Config: on, Metric: tune.MetricCPU, Value: 10, AtS: 6},
		{Phase: "knob jit", Config: off, Metric: tune.MetricCPU, Value: 4, AtS: 5},
		{Phase: "knob jit", Config: on, Metric: tune.MetricCPU, Value: 10, AtS: 4},
		{Phase: "knob jit", Config: off, Metric: tune.MetricCPU, Value: 2, AtS: 3},
		{Phase: "knob jit", Config: on, Metric: tune.MetricCPU, Value: 10, AtS: 2},
		{Phase: "knob jit", Config: off, Metric: tune.MetricCPU, Value: 1, AtS: 1},
		{Phase: "knob opcache", Config: on, Metric: tune.MetricCPU, Value: 6, Duet: true, AtS: 0.7},
		{Phase: "knob opcache", Config: off, Metric: tune.MetricCPU, Value: 5, Duet: true, AtS: 0.6},
		{Phase: "knob opcache", Config: on, Metric: tune.MetricCPU, Value: 5, Duet: true, AtS: 0.5},
		{Phase: "knob opcache", Config: off, Metric: tune.MetricCPU, Value: 5, Duet: true, AtS: 0.4},
		{Phase: "sweep", Config: off, Metric: tune.MetricCapacity, Value: 3, AtS: 0.1},
		{Phase: "sweep", Config: on, Metric: tune.MetricCapacity, Value: 3, AtS: 0.2},
	}
	data, err := json.Marshal(tune.Result{Trials: trials})
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(t.TempDir(), "result.json")
	if err := os.WriteFile(in, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	capture.Stdout(t, func() { err = extractNoise(out, []string{in}) })
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(out, "*"))
	for i := range files {
		files[i] = filepath.Base(files[i])
	}
	var want []string
	for _, k := range []string{tune.MetricGoodput, tune.MetricCPU, duetKey} {
		want = append(want, "noise-"+k+".json")
	}
	slices.Sort(want)
	if !slices.Equal(files, want) {
		t.Fatalf("files %v, want %v", files, want)
	}
	cpu, err := experiment.LoadNoise(filepath.Join(out, "noise-"+tune.MetricCPU+".json"))
	if err != nil {
		t.Fatal(err)
	}
	// jit=off's 1, 2, 4 lie -ln 2, 0, +ln 2 from their mean log, scaled by sqrt(3/2) for the mean taken out; every
	// jit=tracing trial is at its mean. Rounds in the order the trials began: off first in each.
	k := math.Ln2 * math.Sqrt(1.5)
	wantRounds := [][]float64{{-k, 0}, {0, 0}, {k, 0}}
	if len(cpu.Rounds) != len(wantRounds) {
		t.Fatalf("CPU rounds %v, want %v", cpu.Rounds, wantRounds)
	}
	for i, r := range cpu.Rounds {
		if len(r) != 2 || math.Abs(r[0]-wantRounds[i][0]) > 1e-9 || math.Abs(r[1]-wantRounds[i][1]) > 1e-9 {
			t.Errorf("CPU round %d: %v, want %v", i, r, wantRounds[i])
		}
	}
	for key, rounds := range map[string]int{tune.MetricGoodput: 2, duetKey: 2} {
		n, err := experiment.LoadNoise(filepath.Join(out, "noise-"+key+".json"))
		if err != nil || len(n.Rounds) != rounds {
			t.Errorf("%s: %d rounds (%v), want %d", key, len(n.Rounds), err, rounds)
		}
	}
	if err := extractNoise(t.TempDir(), []string{filepath.Join(t.TempDir(), "missing.json")}); err == nil {
		t.Error("a missing result file: no error")
	}
}
