package gate

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/clock"
	"github.com/phptune/phptune/internal/experiment"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/stats"
)

// take is version v's trial taking d on a simulated gate's clock: it moves only as OLD's trials take their time.
// A duet round's two trials run at once, so NEW's take none of their own. On it a run's time shares are the
// rules', whatever the machine does to the test: timed by the wall clock, these tests read 5 rounds where they
// want 20 when starved harder than a busy loop (nice 19 in a low-weight autogroup beside a CI run).
func take(c *clock.Sim, v int, d time.Duration) {
	if v == 0 {
		c.Add(d)
	}
}

// simGate is a simulated gate and its clock.
type simGate struct {
	*gate
	sim *clock.Sim
}

// simulated is a gate whose stacks start at once and whose trials draw CPU a request: NEW costs effect[name] more
// than OLD on each comparison, with noise of sd[name] a trial (sd[""] where not given), and each trial takes pace
// on its clock. Its latency trials draw a p99 of 10 ms, NEW's lat[name] more, with noise of 0.1 a trial.
func simulated(t *testing.T, budget time.Duration, effect, sd, lat map[string]float64, pace time.Duration) simGate {
	t.Helper()
	return simulatedSeed(t, 51, budget, effect, sd, lat, pace)
}

// simulatedSeed is simulated with the trials' noise drawn from seed.
func simulatedSeed(t *testing.T, seed uint64, budget time.Duration, effect, sd, lat map[string]float64, pace time.Duration) simGate {
	t.Helper()
	o := Options{URLs: []load.MixItem{{URI: "/a", Weight: 1}, {URI: "/b", Weight: 1}, {URI: "/c", Weight: 1}},
		Budget: budget, MinEffect: 0.03, Alpha: 0.05, Timeout: time.Second, Old: Version{Label: "OLD"}, New: Version{Label: "NEW"}}
	g := newGate(o)
	clk := clock.NewSim(0)
	g.clock, g.began = clk, clk.Now()
	g.deadline = g.began.Add(budget)
	g.setUp()
	var mu sync.Mutex
	rng, latRng := rand.New(rand.NewPCG(seed, 1)), rand.New(rand.NewPCG(seed, 2))
	g.startOne = func(ctx context.Context, v, serial int) (*live, error) { return &live{serial: serial}, nil }
	g.trialOne = func(ctx context.Context, v int, l *live, c *comparison) (experiment.Observation, error) {
		mu.Lock()
		noise, ok := sd[c.Name]
		if !ok {
			noise = sd[""]
		}
		x := 1000 * math.Exp(noise*rng.NormFloat64())
		mu.Unlock()
		if v == 1 {
			x *= 1 + effect[c.Name]
		}
		take(clk, v, pace)
		if ctx.Err() != nil {
			return experiment.Observation{}, ctx.Err()
		}
		return experiment.Observation{Value: x, Requests: 100, Rate: 100, Stack: l.serial}, nil
	}
	g.latencyOne = func(ctx context.Context, v int, l *live, c *comparison, rate float64, n int) (latTrial, error) {
		mu.Lock()
		p99 := 10 * math.Exp(0.1*latRng.NormFloat64())
		mu.Unlock()
		if v == 1 {
			p99 *= 1 + lat[c.Name]
		}
		return latTrial{P50: p99 / 2, P99: p99}, nil
	}
	for _, c := range g.comps {
		c.n, c.cost = 100, [2]time.Duration{pace, 0}
	}
	pair, wall, err := g.startPair(context.Background(), g.nextSerials())
	if err != nil {
		t.Fatal(err)
	}
	g.cur, g.startWall = pair, wall
	return simGate{g, clk}
}

// Each comparison races until it is decided or shown not worse, and leaves its rounds to the others; one that
// cannot be decided runs until the budget ends; one decided on CPU that races on for its p99 is stated on all
// its rounds while they bear its verdict out (else at the look that decided it, decided_at). Every round of a
// comparison runs on a fresh pair of stacks.
func TestRoundsRaceEachComparisonUntilItIsDecided(t *testing.T) {
	// GET /c's trials are too noisy for the budget to decide.
	effect := map[string]float64{"mix": 0.10, "GET /a": 0.25, "GET /b": 0, "GET /c": 0}
	g := simulated(t, 1500*time.Millisecond, effect, map[string]float64{"": 0.02, "GET /c": 0.6}, nil, 2*time.Millisecond)
	if err := g.rounds(context.Background()); err != nil {
		t.Fatal(err)
	}
	r := g.result()
	want := map[string]string{"mix": Worse, "GET /a": Worse, "GET /b": NotWorse, "GET /c": Undecided}
	for i, c := range r.Comparisons {
		if c.Gate != want[c.Name] {
			t.Errorf("%s: %s after %d rounds (%s %s), want %s", c.Name, c.Gate, c.Rounds, c.Verdict, c.Interval(), want[c.Name])
		}
		if c.Name == "GET /c" && c.Ended != experiment.EndBudget {
			t.Errorf("GET /c ended %q, want it raced to the budget's end", c.Ended)
		}
		if c.DecidedAt != 0 && (c.DecidedAt >= c.Rounds || c.Verdict == stats.Inconclusive) {
			t.Errorf("%s: CPU %s stated at round %d of %d, want a verdict of an earlier look", c.Name, c.Verdict,
				c.DecidedAt, c.Rounds)
		}
		if c.Name == "GET /b" && (c.Verdict != stats.NoDifference || c.DecidedAt != 0) {
			t.Errorf("GET /b: CPU %s stated at round %d of %d, want no difference on all its rounds", c.Verdict,
				c.DecidedAt, c.Rounds)
		}
		seen := map[int]bool{}
		for _, a := range g.comps[i].out.Arms {
			for _, o := range a.Trials {
				if seen[o.Stack] {
					t.Errorf("%s: stack %d ran two trials", c.Name, o.Stack)
				}
				seen[o.Stack] = true
			}
		}
	}
	if r.Outcome != Worse || r.Rounds < 10 {
		t.Errorf("outcome %s in %d rounds, want worse and the budget used", r.Outcome, r.Rounds)
	}
	if late := g.clock.Now().Sub(g.began) - g.o.Budget; late > 0 {
		t.Errorf("the rounds ended %s after the budget", late)
	}
}

// With FailFast the rounds stop at the first comparison shown worse: the outcome is worse as it would be at the
// budget's end, reached in a fraction of it, and the comparisons still racing say why they stopped.
func TestRoundsFailFast(t *testing.T) {
	effect := map[string]float64{"GET /a": 0.25}
	sd := map[string]float64{"": 0.02, "GET /c": 0.15}
	for _, fast := range []bool{false, true} {
		g := simulated(t, 1500*time.Millisecond, effect, sd, nil, 2*time.Millisecond)
		g.o.FailFast = fast
		if err := g.rounds(context.Background()); err != nil {
			t.Fatal(err)
		}
		r, took := g.result(), g.clock.Now().Sub(g.began)
		ended := map[string]string{}
		for _, c := range r.Comparisons {
			ended[c.Name] = c.Ended
		}
		t.Logf("fail fast %v: %s in %d rounds, %s of %s; ended %v", fast, r.Outcome, r.Rounds, took, g.o.Budget, ended)
		if r.Outcome != Worse || ended["GET /a"] != endedWorse {
			t.Errorf("fail fast %v: outcome %s, GET /a ended %q; want worse", fast, r.Outcome, ended["GET /a"])
		}
		if fast && (took > g.o.Budget/3 || ended["GET /c"] != endedFailFast) {
			t.Errorf("fail fast: %s of the %s budget taken, GET /c ended %q; want a third at most, and stopped", took,
				g.o.Budget, ended["GET /c"])
		}
		if !fast && took < g.o.Budget*2/3 {
			t.Errorf("without fail fast: %s of the %s budget taken, want GET /c raced on", took, g.o.Budget)
		}
	}
}

// Interrupted (in its 30th trial), the comparisons keep what they had, marked interrupted.
func TestRoundsStopWhenInterrupted(t *testing.T) {
	g := simulated(t, time.Minute, map[string]float64{}, map[string]float64{"": 0.05}, nil, 5*time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	trials, one := 0, g.trialOne
	g.trialOne = func(ctx context.Context, v int, l *live, c *comparison) (experiment.Observation, error) {
		mu.Lock()
		if trials++; trials == 30 {
			cancel()
		}
		mu.Unlock()
		return one(ctx, v, l, c)
	}
	err := g.rounds(ctx)
	if ctx.Err() == nil || err == nil {
		t.Fatalf("rounds: %v, want the context's error", err)
	}
	r := g.result()
	if r.Rounds < 1 {
		t.Errorf("%d rounds before the interruption", r.Rounds)
	}
	for _, c := range r.Comparisons {
		if c.Gate == Worse {
			t.Errorf("%s: worse on an interruption", c.Name)
		}
	}
}

// A comparison whose p99 NEW makes worse at the same CPU is worse on latency, and says so (it stops racing then,
// its CPU perhaps undecided); the others are worse on neither figure (a p99 that leans worse by chance keeps one
// undecided).
func TestRoundsCallAWorseP99Worse(t *testing.T) {
	g := simulated(t, 1500*time.Millisecond, map[string]float64{}, map[string]float64{"": 0.02},
		map[string]float64{"mix": 0.5, "GET /b": 1.5}, 2*time.Millisecond)
	if err := g.rounds(context.Background()); err != nil {
		t.Fatal(err)
	}
	r := g.result()
	for _, c := range r.Comparisons {
		wantLat := map[string]string{"mix": Worse, "GET /b": Worse}[c.Name]
		if c.Latency == nil || (c.Latency.Gate == Worse) != (wantLat == Worse) || c.CPUGate == Worse {
			t.Errorf("%s: CPU %s, latency %+v; want CPU not worse, latency worse: %v", c.Name, c.CPUGate, c.Latency,
				wantLat == Worse)
			continue
		}
		if wantLat == Worse && (c.Gate != Worse || len(c.WorseOn) != 1 || c.WorseOn[0] != FigureLatency) {
			t.Errorf("%s: %s on %v, want worse on latency", c.Name, c.Gate, c.WorseOn)
		}
		if c.Latency.RatePerS != latencyShare*100 || c.Latency.NewP99Ms <= c.Latency.OldP99Ms && wantLat == Worse {
			t.Errorf("%s: latency %+v, want the rate half the trials' 100/s and NEW's p99 the higher", c.Name, c.Latency)
		}
	}
	if r.Outcome != Worse {
		t.Errorf("outcome %s, want worse", r.Outcome)
	}
}

// NoLatency races CPU a request alone: no latency trials, no second figure, nothing worse on a p99 planted.
func TestRoundsWithoutLatencyRaceCPUAlone(t *testing.T) {
	g := simulated(t, 900*time.Millisecond, map[string]float64{"GET /a": 0.25}, map[string]float64{"": 0.02},
		map[string]float64{"GET /b": 1.5}, 2*time.Millisecond)
	g.o.NoLatency = true
	g.setUp()
	for _, c := range g.comps {
		c.n, c.cost = 100, [2]time.Duration{2 * time.Millisecond, 0}
	}
	if err := g.rounds(context.Background()); err != nil {
		t.Fatal(err)
	}
	r := g.result()
	if r.LatencyMetric != "" {
		t.Errorf("latency metric %q without latency", r.LatencyMetric)
	}
	for i, c := range r.Comparisons {
		if c.Latency != nil || g.comps[i].out.Arms[1].Vs2 != nil || c.Name == "GET /b" && c.Gate == Worse {
			t.Errorf("%s: %s on %v, latency %+v; want CPU alone", c.Name, c.Gate, c.WorseOn, c.Latency)
		}
		if c.Name == "GET /a" && (c.Gate != Worse || strings.Join(c.WorseOn, ",") != FigureCPU) {
			t.Errorf("GET /a: %s on %v, want worse on cpu", c.Gate, c.WorseOn)
		}
	}
}

// slowLatency makes g's latency trials take d each, as a real one takes longer than a round's CPU trials.
func slowLatency(g simGate, d time.Duration) {
	one := g.latencyOne
	g.latencyOne = func(ctx context.Context, v int, l *live, c *comparison, rate float64, n int) (latTrial, error) {
		take(g.sim, v, d)
		return one(ctx, v, l, c, rate, n)
	}
}

// While a comparison's CPU figure is open, its latency trials (here three times as long as its CPU trials) take
// at most a third of its time, in some of its rounds, the first among them; the p99 is judged on those rounds.
func TestRoundsGiveLatencyAThird(t *testing.T) {
	g := simulated(t, 600*time.Millisecond, map[string]float64{}, map[string]float64{"": 0.3}, nil, 2*time.Millisecond)
	slowLatency(g, 6*time.Millisecond)
	if err := g.rounds(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, c := range g.comps {
		vs, vs2 := c.out.Arms[1].Vs, c.out.Arms[1].Vs2
		if gateOf(vs, g.o.MinEffect) == NotWorse || vs2 == nil {
			t.Fatalf("%s: CPU %+v, p99 %+v: want CPU undecided and a p99", c.Name, vs, vs2)
		}
		share := float64(c.latSpent) / float64(c.spent)
		one := float64(c.latSpent) / float64(c.latRuns) / float64(c.spent)
		t.Logf("%s: %d turns, %d with latency trials, %.0f%% of its time", c.Name, c.turns, c.latRuns, 100*share)
		// On the simulation's clock a trial takes what it was foreseen to: the third, and at most a turn's over it.
		if share > 1.0/3+one || c.latRuns < 2 || vs.N != c.turns || vs2.N != c.latRuns {
			t.Errorf("%s: latency trials in %d of %d turns (p99 judged on %d, CPU on %d), %.0f%% of its time; "+
				"want at most a third and more than one", c.Name, c.latRuns, c.turns, vs2.N, vs.N, 100*share)
		}
		if got := len(c.lat.trials[0]); got != c.latRuns {
			t.Errorf("%s: %d latency trials recorded in %d turns with them", c.Name, got, c.latRuns)
		}
	}
}

// Once a comparison's CPU is shown not worse (in a few rounds here), the p99 is all it races for: its latency
// trials run every turn, well over the third they may take while CPU is open, until the p99 is decided: 75% of
// its time at 6 ms of latency trials to 2 ms of CPU trials, less the turns before CPU was shown.
func TestRoundsGiveLatencyEveryTurnOnceCPUIsShown(t *testing.T) {
	g := simulated(t, 800*time.Millisecond, map[string]float64{}, map[string]float64{"": 0.002}, nil, 2*time.Millisecond)
	slowLatency(g, 6*time.Millisecond)
	if err := g.rounds(context.Background()); err != nil {
		t.Fatal(err)
	}
	open := 0
	for _, c := range g.comps {
		if c.out.Arms[1].Vs2.Verdict != stats.Inconclusive {
			continue // decided: its latency trials stopped then
		}
		open++
		share := float64(c.latSpent) / float64(c.spent)
		t.Logf("%s: %d turns, %d with latency trials, %.0f%% of its time", c.Name, c.turns, c.latRuns, 100*share)
		if gateOf(c.out.Arms[1].Vs, g.o.MinEffect) != NotWorse || share <= 0.6 || c.latRuns <= c.turns/2 {
			t.Errorf("%s: latency trials in %d of %d turns, %.0f%% of its time, CPU %s; want CPU not worse and "+
				"most of the time the p99's", c.Name, c.latRuns, c.turns, 100*share, gateOf(c.out.Arms[1].Vs, g.o.MinEffect))
		}
	}
	if open == 0 {
		t.Error("every p99 decided: nothing to see")
	}
}

// A p99 that leans worse is the figure that may end the race: every turn that begins with it leaning runs
// latency trials, CPU open and past latencyTimeShare; so does the second turn after a first round that read it
// worse by the minimum effect (the lean's t-test needs two).
func TestRoundsGiveALeaningP99EveryTurn(t *testing.T) {
	g := simulated(t, time.Hour, map[string]float64{}, map[string]float64{"": 0.3},
		map[string]float64{"GET /b": 1}, 2*time.Millisecond)
	slowLatency(g, 6*time.Millisecond)
	c := g.comps[2]
	leaning := 0
	for turn := 1; turn <= 40 && c.ended == ""; turn++ {
		leans := c.out != nil && (g.leans(c) || c.out.Arms[1].Vs2.N == 1)
		if err := g.turn(context.Background(), c); err != nil {
			t.Fatal(err)
		}
		if leans {
			leaning++
			if !c.latNow {
				t.Errorf("turn %d: the p99 leaned worse, and the turn ran no latency trials", turn)
			}
		}
	}
	t.Logf("%d leaning turns, ended %q", leaning, c.ended)
	if leaning < 2 {
		t.Errorf("%s: %d turns began leaning worse; want some to see (ended %q, %d latency rounds, %+v)", c.Name,
			leaning, c.ended, c.latRuns, c.out.Arms[1].Vs2)
	}
}

// Comparisons that race on only to watch their p99 take their turns in rounds that keep their share of the wall
// time to a quarter while no p99 leans worse, half while one does: one still undecided gets the rest. A p99's noise
// may leave GET /b leaning worse for part of a run (and the two versions' draws come in the order their goroutines
// run), so the claims on turns and on the quarter are over ten runs of their own seeds: on the simulation's clock
// 2 runs of 100 missed the first, so 6 in 10 leaves a flake below 1e-6; with every comparison taking every turn it
// held in 0 of 10. The half holds in every run, to a round.
func TestRoundsGiveTheUndecidedTheTime(t *testing.T) {
	const runs = 10
	held, quarter := 0, 0
	for seed := uint64(1); seed <= runs; seed++ {
		g := simulatedSeed(t, 60+seed, 600*time.Millisecond, map[string]float64{}, map[string]float64{"": 0.002, "GET /c": 0.3},
			nil, 2*time.Millisecond)
		if err := g.rounds(context.Background()); err != nil {
			t.Fatal(err)
		}
		turns := map[string]int{}
		var round time.Duration // a round of every comparison's turn, at their pace
		for _, c := range g.comps {
			turns[c.Name] = c.turns
			round += c.spent / time.Duration(max(c.turns, 1))
		}
		w := g.watchWall
		if w[1] > w[0]+2*round || w[0] == 0 {
			t.Errorf("seed %d: rounds with those watching took %s, those without %s: want half at most", 60+seed,
				w[1], w[0])
		}
		if 4*w[1] <= w[0]+w[1]+8*round {
			quarter++
		}
		b := g.comps[2]
		if b.Name == "GET /b" && b.ended == "" && g.watching(b) && turns["GET /c"] >= turns["GET /b"]*3/2 {
			held++
		} else {
			t.Logf("seed %d: turns %v (GET /b %s, ended %q)", 60+seed, turns, g.gates(b), b.ended)
		}
	}
	if held < runs*6/10 || quarter < runs*6/10 {
		t.Errorf("GET /b watching its p99 and GET /c, undecided, given half again its turns in %d of %d runs, the "+
			"watchers' rounds a quarter of the time in %d: want 6 in 10 or more of each", held, runs, quarter)
	}
}
