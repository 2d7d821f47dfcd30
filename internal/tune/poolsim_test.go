package tune

import (
	"testing"
	"time"

	"github.com/phptune/phptune/internal/knob"
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
