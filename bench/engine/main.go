// Command engine shows the experiment engine's error rates and power by simulation on replayed real noise:
// rounds of real interleaved trials from tune result.json files, each arm's mean taken out, replayed around
// planted effects the way real runs are hard: in blocks of consecutive rounds, each round's trials in the order
// they ran, each stack with its own offset, failure bursts planted. It prints, for pairwise comparisons and for
// whole simulated tune runs of the demo app, the figures the engine is held to, scored per run over every
// verdict the run gives (a wrong sign anywhere, the final comparison's included). The figures come from the
// recorded runs that did not choose the engine's parameters (Noise.Held); -choose picks g and minRounds on the
// others. Trials recorded in duet rounds are extracted apart (noise-req_per_cpu_s_duet.json): with them, the
// pairwise races include duet races and the simulated runs rows whose CPU races are duets, as tune runs them.
// bench/engine.sh runs it; -extract writes the noise files the unit tests replay.
package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"math/rand"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/phptune/phptune/internal/arms"
	"github.com/phptune/phptune/internal/experiment"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/stats"
	"github.com/phptune/phptune/internal/tune"
)

// The noise files replayed: goodput (dynamic pools, or any pool in older recordings), goodput on static pools
// (steady twins), CPU, CPU in duet rounds (kept apart: a duet cancels what its trials share) and split rounds'
// goodput figures (tune.SimOptions.Split). The last three are optional: older recordings have none of them.
var (
	staticKey = tune.NoiseKey(tune.MetricGoodput, "static", false)
	duetKey   = tune.NoiseKey(tune.MetricCPU, "", true)
	splitKey  = tune.NoiseKey(tune.MetricGoodput, "", true)
	noiseKeys = []string{tune.MetricGoodput, staticKey, tune.MetricCPU, duetKey, splitKey}
)

// planted are the demo's measured effects (opcache off -44%, the JIT's tracing +20% and function +10%, preload
// -18%: dm10a and dm10b measured -19% and -20%) and one knob with a planted 5% gain (keep-alive on); every other
// knob has none.
var planted = map[string]map[string]float64{
	"opcache":   {"off": math.Log(0.56)},
	"jit":       {"tracing": math.Log(1.2), "function": math.Log(1.1)},
	"preload":   {"on": math.Log(0.82)},
	"keepalive": {"on": math.Log(1.05)},
}

// setup is how the runs are replayed.
type setup struct {
	runs    int
	replay  experiment.ReplayOptions
	mixture float64 // 0: the engine's default
	least   int     // tune's fewest rounds for a race (0: its default)
	told    bool    // the engine is told the stacks' spread (Spec.StackSD)
	duet    bool    // CPU races run duet rounds (tune.SimOptions.Duet), on duet rounds' noise
	split   bool    // goodput races run split rounds where tune does (tune.SimOptions.Split)
	// duetSD is the spread of the offsets planted in duet rounds, on top of the recording's own: its rounds ran
	// on fresh stacks, so their residuals hold the offsets already (0: those alone).
	duetSD float64
	// goodputTrial, cpuTrial, duetTrial, start and twinStart are what a simulated run's trials and starts cost
	// (duetTrial: a duet round's CPU trial at the app's rate alone, tune's cpuDuetSeconds).
	goodputTrial, cpuTrial, duetTrial, start, twinStart time.Duration
}

func main() {
	extract := flag.String("extract", "", "write the noise of the result files to DIR/noise-METRIC.json and stop")
	noiseDir := flag.String("noise", "internal/experiment/testdata", "directory of noise-METRIC.json files to replay")
	runs := flag.Int("runs", 500, "simulated experiments or tune runs per figure")
	stackSD := flag.Float64("stack-sd", 0.02, "spread of a stack's own offset (log scale); the figures also show 0 and half of it")
	every := flag.Int("new-stack-every", 5, "trials an arm's stack serves before a fresh one, in the rows with replicated stacks")
	block := flag.Float64("block", experiment.DefaultBlock, "mean length of the blocks of consecutive recorded rounds")
	burstRate := flag.Float64("bursts", 0.02, "share of trials with a burst of failures")
	burstMean := flag.Float64("burst-mean", 8, "mean failed requests of a burst, of 180 a trial")
	choose := flag.Bool("choose", false, "choose g and minRounds on the recorded runs that chose them (Noise.Tuning) and stop")
	goodputTrial := flag.Duration("goodput-trial", 400*time.Millisecond, "what a goodput trial costs in the simulated runs (the demo's at 4 connections: 0.45s; at 128: 2s)")
	cpuTrial := flag.Duration("cpu-trial", 400*time.Millisecond, "what a CPU trial costs in the simulated runs")
	duetTrial := flag.Duration("duet-trial", 800*time.Millisecond,
		"what a duet round's CPU trial costs at the app's rate alone (a round of k arms: k of them)")
	start := flag.Duration("start", 4*time.Second, "what starting a goodput arm's stack costs (settling a dynamic pool)")
	twinStart := flag.Duration("twin-start", time.Second, "what starting a static twin's stack costs")
	tuneOnly := flag.Bool("tune-only", false, "the simulated tune runs alone, without the pairwise races")
	duetOnly := flag.Bool("duet", false, "only the rows that set duet rounds beside alternating ones")
	splitDir := flag.String("split", "internal/experiment/testdata/split",
		"directory of the goodput noise of runs that ran split rounds (their trials in turn, and noise-"+splitKey+
			".json their split figures), for the rows that set split rounds beside rounds in turn (\"\": none)")
	splitOnly := flag.Bool("split-only", false, "only the rows that set split rounds beside rounds in turn")
	flag.Parse()
	if *extract != "" {
		if err := extractNoise(*extract, flag.Args()); err != nil {
			fail(err)
		}
		return
	}
	noise, err := loadNoise(*noiseDir)
	if err != nil {
		fail(err)
	}
	s := setup{runs: *runs, replay: experiment.ReplayOptions{Block: *block, StackSD: *stackSD, NewStackEvery: *every,
		Bursts: experiment.Bursts{Rate: *burstRate, Mean: *burstMean, Requests: 180}},
		goodputTrial: *goodputTrial, cpuTrial: *cpuTrial, duetTrial: *duetTrial, start: *start, twinStart: *twinStart}
	fmt.Printf("replay: blocks of %.0f rounds on average, trials in their recorded order, stacks' offsets of up to sd %.1f%%,\n",
		s.replay.Block, 100*s.replay.StackSD)
	fmt.Printf("        bursts of failures in %.0f%% of trials (%.0f of 180 requests on average)\n", 100*s.replay.Bursts.Rate, s.replay.Bursts.Mean)
	if *choose {
		chooseParams(part(noise, experiment.Noise.Tuning), s)
		return
	}
	held := part(noise, experiment.Noise.Held)
	if *splitOnly {
		splitRows(held, *splitDir, s)
		return
	}
	for _, told := range []bool{false, true} {
		if *tuneOnly || *duetOnly && !told {
			continue
		}
		t := s
		t.told = told
		if !told {
			t.replay.NewStackEvery = 0
		}
		keys := noiseKeys
		if *duetOnly {
			keys = []string{tune.MetricCPU, duetKey}
		}
		pairwise(held, t, keys)
	}
	fmt.Printf("\nSimulated tune runs of the demo on the held-out runs' noise, %d runs each (scored per run, every verdict),\n", s.runs)
	fmt.Printf("a goodput trial %s, a CPU trial %s, a start %s (a twin's %s):\n", s.goodputTrial, s.cpuTrial, s.start, s.twinStart)
	fmt.Println(header)
	for _, budget := range []time.Duration{10 * time.Minute, 3 * time.Minute} {
		for _, v := range tuneRows(s, len(held[duetKey].Rounds) > 0, *duetOnly) {
			t := s
			t.replay.StackSD, t.replay.NewStackEvery, t.told, t.duet, t.duetSD = v.sd, v.every, v.told, v.duet, v.duetSD
			fmt.Println(tuneRuns(held, t, budget).row(budget, t))
		}
	}
	fmt.Println(legend)
	if *splitDir != "" && !*duetOnly {
		splitRows(held, *splitDir, s)
	}
}

// splitRows prints simulated tune runs with the goodput races in turn and in split rounds where tune runs them
// so (tune.SimOptions.Split), every goodput trial replaying the runs of dir, which ran split rounds: their trials
// in turn, and their split figures. The CPU races run as tune runs them.
func splitRows(noise map[string]experiment.Noise, dir string, s setup) {
	noise = maps.Clone(noise)
	for _, k := range []string{tune.MetricGoodput, staticKey, splitKey} {
		n, err := experiment.LoadNoise(fmt.Sprintf("%s/noise-%s.json", dir, k))
		if err != nil {
			fail(err)
		}
		noise[k] = n.Held()
		fmt.Printf("split runs' noise %-14s %4d rounds (sd of a log ratio %.3f) from %s\n", k, len(n.Rounds), n.SD(), n.Source)
	}
	fmt.Printf("\nSimulated tune runs of the demo, goodput races in turn and in split rounds (\"split\") on those runs' noise,\n")
	fmt.Printf("a split round's duet trial %s an arm besides its trial in turn, %d runs each:\n", tune.SplitShare, s.runs)
	fmt.Println(header)
	for _, budget := range []time.Duration{10 * time.Minute, 3 * time.Minute} {
		for _, split := range []bool{false, true} {
			t := s
			t.told, t.split = true, split
			t.duet, t.duetSD = len(noise[duetKey].Rounds) > 0, s.replay.StackSD
			fmt.Println(tuneRuns(noise, t, budget).row(budget, t))
		}
	}
}

// tuneRow is a row of simulated tune runs: the stacks' offsets planted, how often the arms move (0: never),
// whether the engine is told the offsets' spread, whether CPU races run duet rounds and the offsets planted there.
type tuneRow struct {
	sd         float64
	every      int
	told, duet bool
	duetSD     float64
}

// tuneRows are the rows of simulated tune runs: offsets none, half of s's and s's, on one stack an arm or moving,
// told or not; with duet rounds' noise, duet rows with offsets of none, s's and twice s's planted on top of the
// recording's own, beside alternating ones at twice s's. duetOnly keeps the rows that compare the two.
func tuneRows(s setup, duet, duetOnly bool) []tuneRow {
	sd, every := s.replay.StackSD, s.replay.NewStackEvery
	rows := []tuneRow{{sd: 0}, {sd: sd / 2}, {sd: sd / 2, told: true}, {sd: sd}, {sd: sd, told: true},
		{sd: sd, every: every}, {sd: sd, every: every, told: true}}
	if duetOnly {
		rows = rows[len(rows)-1:] // as tune runs them, alternating
	}
	if duet {
		for _, d := range []float64{0, sd, 2 * sd} {
			rows = append(rows, tuneRow{sd: sd, every: every, told: true, duet: true, duetSD: d})
		}
		rows = append(rows, tuneRow{sd: 2 * sd, every: every, told: true}, tuneRow{sd: 2 * sd, every: every, told: true,
			duet: true, duetSD: 2 * sd})
	}
	return rows
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "engine:", err)
	os.Exit(1)
}

// loadNoise reads the noise files of dir, saying where each part comes from.
func loadNoise(dir string) (map[string]experiment.Noise, error) {
	noise := map[string]experiment.Noise{}
	for _, m := range noiseKeys {
		n, err := experiment.LoadNoise(fmt.Sprintf("%s/noise-%s.json", dir, m))
		if errors.Is(err, fs.ErrNotExist) && (m == staticKey || m == duetKey || m == splitKey) {
			continue // older recordings: static pools' goodput replays goodput's noise; no duet or split rows
		}
		if err != nil {
			return nil, err
		}
		noise[m] = n
		tu, he := n.Tuning(), n.Held()
		fmt.Printf("noise %-14s %4d rounds (sd of a log ratio %.3f) from %s;\n", m, len(he.Rounds), he.SD(), he.Source)
		fmt.Printf("      %-14s %4d rounds that chose the parameters (sd %.3f) from %s\n", "", len(tu.Rounds), tu.SD(), tu.Source)
	}
	return noise, nil
}

// part is each noise's part.
func part(noise map[string]experiment.Noise, f func(experiment.Noise) experiment.Noise) map[string]experiment.Noise {
	out := map[string]experiment.Noise{}
	for k, n := range noise {
		out[k] = f(n)
	}
	return out
}

// extractNoise reads tune result files and writes their rounds as noise, by metric.
func extractNoise(dir string, files []string) error {
	byMetric := map[string][]experiment.Recorded{}
	var sources []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		var r tune.Result
		if err := json.Unmarshal(data, &r); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		sources = append(sources, f)
		// A duet round's trials are recorded as they end: in the order they started (the round's), each takes
		// its recorded slot. Alternating trials end in the order they start.
		slices.SortStableFunc(r.Trials, func(a, b tune.TrialRecord) int { return cmp.Compare(a.AtS, b.AtS) })
		turns := map[[2]string]tune.TrialRecord{} // a goodput race's last trial in turn, by phase and arm
		for _, t := range r.Trials {
			// A trial with a fault (the OOM killer struck) was no measurement: tune measured it again.
			if !strings.HasPrefix(t.Phase, "knob ") && t.Phase != "final" || t.Fault != "" {
				continue
			}
			m, v := t.Metric, t.Value
			if m == "" {
				m, v = tune.MetricGoodput, t.RPS
			}
			pm, _, _ := strings.Cut(strings.TrimPrefix(t.Config, "pm="), " ")
			arm := [2]string{t.Phase, t.Config}
			switch {
			case m == tune.MetricGoodput && t.Duet && !splitNow(t.Phase):
				continue // a race tune no longer runs in split rounds (the pool sizes', the final's)
			case m == tune.MetricGoodput && t.Duet: // a split round's duet: the round's figure (splitFigure)
				v, pm = splitFigure(turns[arm], t), ""
			case m == tune.MetricGoodput:
				turns[arm] = t
			}
			m = tune.NoiseKey(m, pm, t.Duet)
			byMetric[m] = append(byMetric[m], experiment.Recorded{Run: f, Group: f + " " + t.Phase, Arm: t.Config, Value: v})
		}
	}
	for m, recs := range byMetric {
		n := experiment.NoiseFrom(strings.Join(sources, ", "), m, recs)
		data, err := json.Marshal(n)
		if err != nil {
			return err
		}
		path := fmt.Sprintf("%s/noise-%s.json", dir, m)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return err
		}
		fmt.Printf("%s: %d rounds from %d runs, sd of a log ratio %.3f (mark the runs that choose parameters \"tuning\": true)\n",
			path, len(n.Rounds), len(n.Runs), n.SD())
	}
	return nil
}

// splitNow says whether tune runs the race of phase in split rounds now (tune.Splits): the split rounds replayed
// are those of the races that run them.
func splitNow(phase string) bool {
	name, ok := strings.CutPrefix(phase, "knob ")
	return ok && tune.Splits(name)
}

// splitFigure is an arm's figure of a split round, as the engine reads it: its goodput in turn over the capacity
// it showed there (its share of the machine) times the capacity of its duet trial; 0 where either read none.
func splitFigure(turn, duet tune.TrialRecord) float64 {
	if turn.ReqPerCPUS <= 0 || duet.ReqPerCPUS <= 0 {
		return 0
	}
	return turn.Value / turn.ReqPerCPUS * duet.ReqPerCPUS
}

// pairwise: two-arm races on the noises of keys at a typical share of a tune run's error budget, each arm on one
// stack of its own, or on a fresh one every s.replay.NewStackEvery trials with the engine told their spread; duet
// rounds (their own noise) move every round, as tune runs them.
func pairwise(noise map[string]experiment.Noise, s setup, keys []string) {
	const alpha, minEffect = 0.05 / 20, tune.DefaultMinEffect
	stacks := "each arm on one stack, the engine not told their spread"
	if s.told {
		stacks = fmt.Sprintf("a fresh stack every %d trials of an arm, the engine told their spread", s.replay.NewStackEvery)
	}
	fmt.Printf("\nPairwise races on the held-out runs' noise, alpha %.4f a comparison, minimum effect %.0f%%, at most 200 rounds,\n", alpha, 100*minEffect)
	fmt.Printf("stacks' offsets sd %.1f%%, %s (duet rounds: a fresh stack every round);\n",
		100*s.replay.StackSD, stacks)
	fmt.Printf("s: a race's median rounds' time:\n")
	fmt.Printf("  %-20s %8s %12s %12s %12s %10s %8s %10s\n",
		"metric", "effect", "better", "worse", "no_diff", "rounds", "s", "coverage")
	for _, m := range keys {
		if _, ok := noise[m]; !ok || m == duetKey && !s.told {
			continue // duet rounds move every round: they belong with the moving stacks
		}
		for _, eff := range []float64{0, 0.01, 0.02, 0.03, 0.05, 0.10, 0.40, -0.40} {
			pc := pairwiseRaces(noise[m], s, m == duetKey, eff, alpha, minEffect)
			fmt.Printf("  %-20s %+7.0f%% %11.1f%% %11.1f%% %11.1f%% %10.0f %8.1f %9.1f%%\n", m, 100*eff,
				pct(pc.better, s.runs), pct(pc.worse, s.runs), pct(pc.nodiff, s.runs), pc.rounds,
				pc.rounds*roundCost(m, s).Seconds(), pct(pc.covered, s.runs))
		}
	}
}

// pairCount is what s.runs two-arm races of a planted effect decided, and their median rounds.
type pairCount struct {
	better, worse, nodiff, covered int
	rounds                         float64
}

// pairwiseRaces runs s.runs two-arm races on n, the second arm's effect eff, in duet rounds when duet.
func pairwiseRaces(n experiment.Noise, s setup, duet bool, eff, alpha, minEffect float64) pairCount {
	var pc pairCount
	rng := rand.New(rand.NewSource(1))
	o := s.replay
	if duet {
		o.NewStackEvery = 1
	}
	var rounds []float64
	for i := 0; i < s.runs; i++ {
		rep := experiment.NewReplayWith(n, rng, o)
		a, b := rep.Arm("a", 0), rep.Arm("b", math.Log1p(eff))
		spec := experiment.Spec{Arms: []experiment.Arm{a, b}, Mode: experiment.Race, HigherIsBetter: true,
			MinEffect: minEffect, Alpha: alpha, MaxRounds: 200, Duet: duet}
		if s.told {
			spec.StackSD = s.replay.StackSD
		}
		out, _ := experiment.Run(context.Background(), spec)
		c := out.Arms[1].Vs
		switch c.Verdict {
		case stats.Better:
			pc.better++
		case stats.Worse:
			pc.worse++
		case stats.NoDifference:
			pc.nodiff++
		}
		if c.LogLo <= math.Log1p(eff) && math.Log1p(eff) <= c.LogHi {
			pc.covered++
		}
		rounds = append(rounds, float64(out.Rounds))
	}
	pc.rounds = stats.Median(rounds)
	return pc
}

// roundCost is what a round of two arms of noise m costs in the simulated runs: two trials, and a start every
// NewStackEvery rounds when the arms move (told); a duet round's two trials at once and, beside them, the
// next round's stacks (a start's time beyond the trials').
func roundCost(m string, s setup) time.Duration {
	trial, start := s.cpuTrial, s.twinStart
	switch m {
	case duetKey:
		return max(2*s.duetTrial, tune.StartsCost(2, s.twinStart))
	case tune.MetricGoodput:
		trial, start = s.goodputTrial, s.start
	case staticKey:
		trial = s.goodputTrial
	}
	if !s.told || s.replay.NewStackEvery == 0 {
		return 2 * trial
	}
	return 2*trial + tune.StartsCost(2, start)/time.Duration(s.replay.NewStackEvery)
}

// score is what simulated tune runs showed, counted per run.
type score struct {
	runs int
	// falseAny: runs with a better or worse verdict whose sign is wrong anywhere (a knob without effect, a
	// planted effect reversed, the final comparison on either figure); falseNull, falseFinal the runs with one
	// on a knob without effect, in the final.
	falseAny, falseNull, falseFinal int
	// wrongNoDiff: runs with no_difference where the truth is at least the minimum effect.
	wrongNoDiff int
	// covered: runs in which every stated interval covers its truth.
	covered             int
	jit, jitAny, five   int
	preload             int
	opcache             int
	opRounds            []float64
	nullRaced, nullNoDf int
	capacity, goodput   int // finals decided on capacity, on goodput, against Debian's defaults
	elapsed             float64
	// raced, decided: knobs raced and decided (better, worse, no_difference, a pool size non_inferior), summed
	// over the runs; cpuRaced, cpuDecided those of the CPU races.
	raced, decided, cpuRaced, cpuDecided int
}

// tuneRuns simulates s.runs tune runs of the demo app within budget, side by side.
func tuneRuns(noise map[string]experiment.Noise, s setup, budget time.Duration) *score {
	sc := &score{runs: s.runs}
	var mu sync.Mutex
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < runtime.NumCPU(); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				res, so := simulate(noise, s, budget, int64(i))
				mu.Lock()
				sc.add(res, so)
				mu.Unlock()
			}
		}()
	}
	for i := 0; i < s.runs; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	return sc
}

// simulate is one simulated tune run of the demo.
func simulate(noise map[string]experiment.Noise, s setup, budget time.Duration, seed int64) (*tune.Result, tune.SimOptions) {
	rng := rand.New(rand.NewSource(seed))
	reps := map[string]*experiment.Replay{}
	for _, k := range noiseKeys { // in a fixed order: the runs are reproducible
		if n, ok := noise[k]; ok {
			o := s.replay
			if k == duetKey {
				o.StackSD = s.duetSD
			}
			reps[k] = experiment.NewReplayWith(n, rng, o)
		}
	}
	so := tune.SimOptions{Knobs: knob.All("preload.php", nil), Base: knob.Debian(), Budget: budget, Effect: tune.Planted(planted),
		Noise:     reps,
		TrialCost: map[string]time.Duration{tune.MetricGoodput: s.goodputTrial, tune.MetricCPU: s.cpuTrial},
		StartCost: s.start, TwinStartCost: s.twinStart, MinEffect: tune.DefaultMinEffect, Alpha: 0.05, Conc: 4, Pool: 4,
		Facts:   knob.Facts{THP: "madvise", MaxResponse: 16 << 10, Concurrency: 4, RealpathLimit: 4 << 20, RealpathUsed: 4 << 10},
		Mixture: s.mixture, MinRounds: s.least, Duet: s.duet, Split: s.split}
	if s.duet {
		so.TrialCost[tune.MetricCPU] = s.duetTrial
	}
	if n, ok := noise[tune.MetricGoodput]; ok {
		// What a real run's sweep tells the planner: goodput's spread (CPU's it assumes, as a real run does).
		so.RoundSD = map[string]float64{tune.MetricGoodput: n.SD()}
	}
	if s.told {
		so.StackSD = map[string]float64{tune.MetricGoodput: s.replay.StackSD, tune.MetricCPU: s.replay.StackSD}
	}
	res, err := tune.Simulate(context.Background(), so)
	if err != nil {
		fail(err)
	}
	return res, so
}

// verdict is one stated comparison and the truth it is about (log scale).
type verdict struct {
	c     *stats.Comparison
	truth float64
	final bool
	null  bool // a knob without effect
}

// add scores one run: every comparison of every race, and the final comparison on both figures.
func (sc *score) add(res *tune.Result, so tune.SimOptions) {
	sc.elapsed += res.ElapsedS
	m := math.Log1p(so.MinEffect)
	var vs []verdict
	for i := range res.Comparisons {
		c := &res.Comparisons[i]
		_, effect := planted[c.Knob]
		vs = append(vs, verdict{c: &c.Stats, truth: planted[c.Knob][c.B] - planted[c.Knob][c.A], null: !effect})
	}
	if h := res.Headline; h != nil {
		rule := knob.RuleOfThumb(0) // its planted effects do not depend on its size
		rule.INI, rule.Defines = so.Base.INI, so.Base.Defines
		rec := so.Effect(res.Recommendation, tune.MetricGoodput)
		for _, c := range []struct {
			c    *stats.Comparison
			base knob.Config
		}{{h.VsDebian, so.Base}, {h.VsRuleOfThumb, rule}, {h.CapacityVsDebian, so.Base}, {h.CapacityVsRuleOfThumb, rule}} {
			if c.c != nil {
				vs = append(vs, verdict{c: c.c, truth: rec - so.Effect(c.base, tune.MetricGoodput), final: true})
			}
		}
		// A recommendation that is the starting point is not raced against it: the headline says so, decided.
		if c := h.CapacityVsDebian; h.Same || c != nil && decided(c.Verdict) {
			sc.capacity++
		}
		if c := h.VsDebian; h.Same || c != nil && decided(c.Verdict) {
			sc.goodput++
		}
	}
	falseAny, falseNull, falseFinal, noDiff, covered := false, false, false, false, true
	for _, v := range vs {
		if v.c.N < 2 || v.c.Verdict == stats.Error {
			continue
		}
		wrong := v.c.Verdict == stats.Better && v.truth <= 0 || v.c.Verdict == stats.Worse && v.truth >= 0
		falseAny = falseAny || wrong
		falseNull = falseNull || wrong && v.null
		falseFinal = falseFinal || wrong && v.final
		noDiff = noDiff || v.c.Verdict == stats.NoDifference && math.Abs(v.truth) >= m
		if v.truth < v.c.LogLo-1e-12 || v.truth > v.c.LogHi+1e-12 {
			covered = false
		}
	}
	sc.falseAny += b2i(falseAny)
	sc.falseNull += b2i(falseNull)
	sc.falseFinal += b2i(falseFinal)
	sc.wrongNoDiff += b2i(noDiff)
	sc.covered += b2i(covered)
	for _, k := range res.Knobs {
		sc.tally(k)
		switch k.Name {
		case "opcache":
			if k.Value == "on" && k.Verdict == stats.Worse {
				sc.opcache++
				sc.opRounds = append(sc.opRounds, float64(k.Rounds))
			}
		case "jit":
			sc.jit += b2i(k.Value == "tracing" && k.Verdict == stats.Better)
			sc.jitAny += b2i(k.Value != "off" && k.Verdict == stats.Better)
		case "preload":
			sc.preload += b2i(k.Value == "off" && k.Verdict == stats.Worse)
		case "keepalive":
			sc.five += b2i(k.Value == "on" && k.Verdict == stats.Better)
		default:
			if k.Rounds > 0 {
				sc.nullRaced++
				sc.nullNoDf += b2i(k.Verdict == stats.NoDifference)
			}
		}
	}
}

func decided(v stats.Verdict) bool {
	return v == stats.Better || v == stats.Worse || v == stats.NoDifference
}

// tally counts a knob raced, and decided.
func (sc *score) tally(k tune.KnobRow) {
	if k.Rounds == 0 {
		return
	}
	d := b2i(decided(k.Verdict) || k.Verdict == tune.NonInferior)
	sc.raced++
	sc.decided += d
	if k.Metric == tune.MetricCPU {
		sc.cpuRaced++
		sc.cpuDecided += d
	}
}

const header = "  budget  stacks: sd    every told |  false better/worse: any  null final | wrong no_diff |" +
	" all covered | JIT tracing any | preload |" +
	" 5% found | opcache rounds | null no_diff | final decided: capacity goodput | s used | knobs decided/raced (CPU)"

const legend = `  (stacks: the spread of their offsets planted, a fresh stack every so many trials of an arm at the
  most, CPU/goodput, fewer when the trials are steady against a start's cost (tune's stackRounds; "-": one for its
  life; "duet:X%": CPU races in duet rounds, every round on fresh stacks, on duet rounds' noise with offsets of X%
  planted on top of the recording's own: its rounds ran on fresh stacks), and whether the engine is told the
  spread (Spec.StackSD). Per run: "any" counts a run with a wrong sign anywhere, "null" on a knob without effect,
  "final" in the final comparison on goodput or capacity; "all covered": every stated interval of the run covers
  its truth; "final decided": the recommendation against the starting point decided, or the same configuration
  (not raced). Targets: a false better/worse in at most 5% of runs counting every verdict; the JIT decided in at
  least 90% of 3-minute runs; "preload": its planted -18% shown worse; "knobs decided/raced": per run, knobs
  better, worse, no_difference or a pool size non_inferior, of those raced, and of the CPU races'.)`

func (sc *score) row(budget time.Duration, s setup) string {
	n := sc.runs
	told := "no"
	if s.told {
		told = "yes"
	}
	every := "-"
	if s.replay.NewStackEvery > 0 {
		// tune's arms move as tune does (at most arms.PerStack), whatever the replay's own NewStackEvery.
		every = fmt.Sprintf("<=%d/%d", arms.PerStack(arms.MetricCPU), arms.PerStack(arms.MetricGoodput))
	}
	if s.duet {
		every = fmt.Sprintf("duet:%.0f%%", 100*s.duetSD) // duet rounds move every round
	}
	if s.split {
		every += " split"
	}
	per := func(k int) float64 { return float64(k) / float64(n) }
	return fmt.Sprintf("  %6s %10.1f%% %8s %4s | %22.1f%% %5.1f%% %5.1f%% | %12.1f%% | %11.1f%% | %6.1f%% %6.1f%% | "+
		"%6.1f%% | %7.1f%% | %8.1f%%, %2.0f | %11.1f%% | %16.1f%% %7.1f%% | %6.0f | %5.1f/%4.1f (%3.1f/%3.1f)",
		budget, 100*s.replay.StackSD, every, told, pct(sc.falseAny, n), pct(sc.falseNull, n), pct(sc.falseFinal, n), pct(sc.wrongNoDiff, n), pct(sc.covered, n),
		pct(sc.jit, n), pct(sc.jitAny, n), pct(sc.preload, n), pct(sc.five, n), pct(sc.opcache, n), median(sc.opRounds), pct(sc.nullNoDf, sc.nullRaced),
		pct(sc.capacity, n), pct(sc.goodput, n), sc.elapsed/float64(n), per(sc.decided), per(sc.raced),
		per(sc.cpuDecided), per(sc.cpuRaced))
}

// chooseMargin is how much more a candidate must decide (the sum of four percentages) to replace tune's own
// parameters: about twice the simulation's own noise in that sum at a few hundred runs.
const chooseMargin = 5

// chooseParams tries g and minRounds on the runs that choose them, with replicated stacks whose spread the
// engine is told: among those within the targets, the one that decides most (the 5% effect at both budgets,
// no_difference on knobs without effect, the JIT at 3 minutes) wins, if by more than chooseMargin over tune's own.
func chooseParams(noise map[string]experiment.Noise, s setup) {
	s.told = true
	fmt.Printf("\nChoosing g and minRounds on the tuning runs' noise, %d runs each:\n", s.runs)
	fmt.Println(header)
	type cand struct {
		g     float64
		least int
		score float64
		ok    bool
	}
	var best, own *cand
	for _, g := range []float64{75, experiment.DefaultMixture, 300} {
		for _, least := range []int{3, 4, 5} {
			t := s
			t.mixture, t.least = g, least
			long, short := tuneRuns(noise, t, 10*time.Minute), tuneRuns(noise, t, 3*time.Minute)
			fmt.Printf("g %3.0f, minRounds %d:\n%s\n%s\n", g, least, long.row(10*time.Minute, t), short.row(3*time.Minute, t))
			c := &cand{g: g, least: least,
				ok:    pct(long.falseAny, s.runs) <= 5 && pct(short.falseAny, s.runs) <= 5 && pct(short.jitAny, s.runs) >= 90,
				score: pct(long.five, s.runs) + pct(long.nullNoDf, long.nullRaced) + pct(short.jitAny, s.runs) + pct(short.five, s.runs)}
			if best == nil || c.ok && !best.ok || c.ok == best.ok && c.score > best.score {
				best = c
			}
			if g == experiment.DefaultMixture && least == 4 {
				own = c
			}
		}
	}
	if own.ok && best.score < own.score+chooseMargin {
		best = own
	}
	fmt.Printf("\nchosen: g %.0f, minRounds %d (within the targets: %v; decides %.1f against tune's own g %.0f, minRounds 4: %.1f)\n",
		best.g, best.least, best.ok, best.score, experiment.DefaultMixture, own.score)
}

func median(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	return stats.Median(x)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func pct(n, of int) float64 { return 100 * float64(n) / float64(max(of, 1)) }
