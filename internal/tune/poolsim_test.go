package tune

import (
	"math/rand"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/arms"
	"github.com/phptune/phptune/internal/clock"
	"github.com/phptune/phptune/internal/experiment"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/stats"
)

// TestSimulatedPoolSizeIsDecided: the demo's sizes as measured quietly (bench/poolmodel.sh: 4 at -3.8% of 8, the
// larger sizes as 8), 10-minute runs, goodput trials varying by 2.1% (the quiet machine's) and by 4% (a busy one's).
// The size 4 lies a percent from the margin, open for hundreds of rounds: the first size shown within the margin
// of every size left is decided in most runs (100 and 73 of 100 in the race's own rounds; on the first live size
// alone, 100 and 49; with a second look at the race once the other knobs are done, 100 and 100), never a size
// worse than the margin, and the comparisons after it load the pool it decided.
func TestSimulatedPoolSizeIsDecided(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	const runs = 100
	for _, c := range []struct {
		sd    float64
		least int // decided runs of 100, at the least
	}{{0.021, 90}, {0.04, 90}} {
		decided, wrong, loaded, looked := 0, 0, 0, 0
		picks := map[string]int{}
		for seed := int64(1); seed <= runs; seed++ {
			so := demoSim(60000+seed, c.sd, 10*time.Minute)
			so.Pool = 8
			so.PoolMargin = 0.03 // the margin 4 lies a percent outside
			base := so.Effect
			so.Effect = func(cfg knob.Config, metric string) float64 {
				if metric == MetricGoodput && cfg.MaxChildren <= 4 {
					return base(cfg, metric) + LogEffect(-0.038)
				}
				return base(cfg, metric)
			}
			res, rows := simulated(t, so)
			row := rows["max_children"]
			if row.Verdict != NonInferior {
				continue
			}
			decided++
			if secondLooked(row) {
				looked++
			}
			picks[row.Value]++
			if row.Value == "4" {
				wrong++
			}
			if knob.MaxChildren().Get(knob.Config{MaxChildren: res.Plan.Concurrency}) == row.Value {
				loaded++
			}
		}
		t.Logf("trials varying %.1f%%: decided %d of %d runs (%d in a second look), picks %v, %d of them size 4 (3.8%% "+
			"worse); the decided pool loaded after in %d", 100*c.sd, decided, runs, looked, picks, wrong, loaded)
		if decided < c.least*runs/100 {
			t.Errorf("trials varying %.1f%%: the pool size decided in %d of %d 10-minute runs, want %d%%", 100*c.sd,
				decided, runs, c.least)
		}
		if wrong > runs/20 {
			t.Errorf("a size 3.8%% worse than the best decided within the 3%% margin in %d of %d runs", wrong, runs)
		}
		if loaded != decided {
			t.Errorf("the comparisons after a decided size loaded it in %d of %d runs", loaded, decided)
		}
	}
}

// TestADecidedPoolIsNarrowed: a sizes' race (6, 8 and 12 here) decided on 8 with 6 still open gets a look once
// nothing undecided is left (narrowable): where 6 serves within the margin (2% below 8, 5% margin) the look shows
// it in most runs and the pool is 6; where 6 is worse than the margin (8% below) it is never chosen. Goodput
// trials vary by 4%, as on a busy machine. Either way the recommendation's size is the row's. Without the look, 6
// was chosen in 11 of 60 runs at -2%; with it, in 60.
func TestADecidedPoolIsNarrowed(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	const runs = 60
	for _, c := range []struct {
		six   float64 // 6's goodput against 8's, as a relative change
		least int     // runs choosing 4, at the least
		most  int     // at the most
	}{{-0.02, runs / 2, runs}, {-0.08, 0, 0}} {
		sixes, narrowed := 0, 0
		for seed := int64(1); seed <= runs; seed++ {
			so := demoSim(61000+seed, 0.04, 10*time.Minute)
			so.Pool = 8
			base := so.Effect
			so.Effect = func(cfg knob.Config, metric string) float64 {
				if metric == MetricGoodput && cfg.MaxChildren <= 6 {
					return base(cfg, metric) + LogEffect(c.six)
				}
				return base(cfg, metric)
			}
			res, rows := simulated(t, so)
			row := rows["max_children"]
			if row.Value == "6" && row.Verdict == NonInferior {
				sixes++
			}
			if strings.Contains(row.Note, "in a second look") {
				narrowed++
			}
			if got := strconv.Itoa(res.Recommendation.MaxChildren); got != row.Value {
				t.Errorf("seed %d: max_children row %s, recommendation %s", seed, row.Value, got)
			}
			if res.PoolSize == nil || strconv.Itoa(res.PoolSize.Chosen) != row.Value {
				t.Errorf("seed %d: max_children row %s, the pool's chosen size %+v", seed, row.Value, res.PoolSize)
			}
		}
		t.Logf("6 at %+.0f%% of 8: chosen in %d of %d runs, the sizes looked at again in %d", 100*c.six, sixes, runs, narrowed)
		if sixes < c.least || sixes > c.most {
			t.Errorf("6 at %+.0f%% of 8 (margin 5%%): chosen in %d of %d runs, want %d to %d", 100*c.six, sixes, runs, c.least, c.most)
		}
	}
}

// TestTheSizesLookComesFirst: WordPress at 10 minutes as a sweep left it (1, 2, 4 and 8 at 24, 42, 43 and 41
// requests/s, 2026-11-27), 2 serving 7% less than 4 (outside the 5% margin), goodput rounds varying by 10%: the
// sizes' race stops open at its turn, and its look comes before the later goodput races and the other looks, out
// of the final's foreseen need (sizesOpen). The pool decided on 4 in 56 runs of 100 (39 without the look's
// claim), never on a size worse than the margin, and the final decided on capacity as often (67; 65 without).
func TestTheSizesLookComesFirst(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	const runs = 100
	decided, wrong, capacity := 0, 0, 0
	for seed := int64(1); seed <= runs; seed++ {
		so := wordpressSim(62000 + seed)
		so.Noise[MetricGoodput] = experiment.NewReplay(gaussNoise(rand.New(rand.NewSource(seed+9)), 0.10), rand.New(rand.NewSource(seed+10)))
		so.TrialCost[MetricGoodput] = 2 * time.Second
		so.StartCost, so.TwinStartCost = 5*time.Second, 4500*time.Millisecond
		so.Pool = 2
		so.Sweep, so.SweepSD = map[int]float64{1: 24, 2: 42, 4: 43, 8: 41}, 0.031
		base := so.Effect
		so.Effect = func(cfg knob.Config, metric string) float64 {
			e := base(cfg, metric)
			if metric == MetricGoodput {
				e += map[int]float64{1: LogEffect(-0.45), 2: LogEffect(-0.07), 8: LogEffect(-0.05)}[cfg.MaxChildren]
			}
			return e
		}
		res, rows := simulated(t, so)
		if row := rows["max_children"]; row.Verdict == NonInferior {
			decided++
			if row.Value != "4" && row.Value != "8" {
				wrong++
			}
		}
		if h := res.Headline; h != nil && h.CapacityVsDebian != nil && h.CapacityVsDebian.Verdict != stats.Inconclusive {
			capacity++
		}
	}
	t.Logf("%d runs: the pool decided in %d (%d on a size worse than the margin), the final on capacity in %d", runs,
		decided, wrong, capacity)
	if decided < runs/2 || wrong > runs/20 || capacity < runs*3/5 {
		t.Errorf("want the pool decided in half the runs at least (found %d of %d), on a size worse than the margin "+
			"in 5%% at most (%d), and the final decided on capacity in 60%% at least (%d)", decided, runs, wrong, capacity)
	}
}

// TestTheSizesRaceRunsWhereItCanDecide: the demo as it runs here (duet rounds of 2.6 s varying by 1.5%, starts of
// 2.5 to 3 s, the sweep's sizes 2 to 16 within 12%, 2026-11-28), its sizes' rounds varying by 5%. A 3-minute run
// has about 2m35s once its sweep is done (a simulation runs none): the sizes' race is not run, and says why, the
// starting size kept (deferred here; TestTheSizesRaceWantsRoundsThatCanDecide for a turn that could not decide).
// At 10 minutes it runs.
func TestTheSizesRaceRunsWhereItCanDecide(t *testing.T) {
	for _, c := range []struct {
		budget time.Duration
		raced  bool
	}{{155 * time.Second, false}, {10 * time.Minute, true}} {
		for seed := int64(1); seed <= 5; seed++ {
			so := demoSim(63000+seed, 0.05, c.budget)
			so.Pool = 5
			so.Sweep, so.SweepSD = map[int]float64{2: 445, 4: 483, 8: 503, 16: 498}, 0.05
			so.Duet, so.TrialCost[MetricCPU] = true, 1300*time.Millisecond
			so.Noise[NoiseKey(MetricCPU, "", true)] = experiment.NewReplay(gaussNoise(rand.New(rand.NewSource(seed)), 0.015),
				rand.New(rand.NewSource(seed+1)))
			so.StartCost, so.TwinStartCost = 3*time.Second, 2500*time.Millisecond
			row := rowsByNameOf(t, so)["max_children"]
			if raced := row.Rounds > 0; raced != c.raced || !raced && (row.Value != "5" || !strings.HasPrefix(row.Note, "not raced: ")) {
				t.Errorf("%s, seed %d: max_children %s after %d rounds (%s); want raced %v, else 5 kept and why",
					c.budget, seed, row.Value, row.Rounds, row.Note, c.raced)
			}
		}
	}
}

func rowsByNameOf(t testing.TB, so SimOptions) map[string]KnobRow {
	_, rows := simulated(t, so)
	return rows
}

// TestTheSizesRaceWantsRoundsThatCanDecide: at the sizes' turn of a 3-minute demo here (2026-11-29, run r: 49 s
// left, the sizes' allowance 15 s, five sizes at half a second a trial, starts of 3 s), its allowance and the most
// its look may claim buy about 9 rounds, where a size shown within 5% of the best needs 16 even at the steadiest
// spread of a sizes' round: it does not run, and says why. With ten minutes left, it runs.
func TestTheSizesRaceWantsRoundsThatCanDecide(t *testing.T) {
	tu, err := newTuner(Options{Base: knob.Debian(), Knobs: knob.All("", nil), Budget: 3 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	clk := clock.NewSim(0)
	tu.clock, tu.start = clk, clk.Now()
	tu.src = &simSource{clock: clk, warm: map[string]int{}}
	tu.budget = experiment.NewBudget(0.05, 36)
	tu.costs.guess[MetricGoodput] = 500 * time.Millisecond
	spec := arms.TrialSpec{Metric: MetricGoodput, Steady: true}
	tu.costs.startGuess[MetricGoodput], tu.costs.startGuess[spec.StartKind()] = 3*time.Second, 3*time.Second
	tu.d = tu.decider()
	least := tu.d.cost(spec, 5, 5)
	tu.end = clk.Now().Add(49 * time.Second)
	if why := tu.sizesNote(15*time.Second, least, 5, spec); !strings.Contains(why, "a size shown within 5% of the best needs 16") {
		t.Errorf("49 s left: %q; want the race not run, for want of the 16 rounds a decision needs", why)
	}
	tu.end = clk.Now().Add(10 * time.Minute)
	if why := tu.sizesNote(100*time.Second, least, 5, spec); why != "" {
		t.Errorf("10 minutes left: %q; want the race run", why)
	}
}
