package tune

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/arms"
	"github.com/phptune/phptune/internal/experiment"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/stats"
)

// sizesOutcome is a sizes' race as experiment.Smallest leaves it: statuses per size, the best and the winner, each
// size other than the best with a comparison against it.
func sizesOutcome(best, winner int, statuses ...string) *experiment.Outcome {
	out := &experiment.Outcome{Best: best, Winner: winner, Rounds: 7}
	for i, s := range statuses {
		a := experiment.ArmResult{Status: s, Trials: []experiment.Observation{{Value: 100, Rate: 100}}, Within: s == experiment.StatusWithin}
		if s == experiment.StatusWinner && i == winner {
			a.Note = "not yet shown within the margin: the budget ran out"
		}
		if i != best {
			a.Vs = &stats.Comparison{Verdict: stats.Inconclusive, Estimate: -0.01, Lo: -0.06, Hi: 0.04, RoundsNeeded: 40}
		}
		out.Arms = append(out.Arms, a)
	}
	return out
}

// shownWithin marks o's arm i the winner shown within the margin, with note.
func shownWithin(o *experiment.Outcome, i int, note string) *experiment.Outcome {
	o.Arms[i].Within, o.Arms[i].Note = true, note
	return o
}

// TestAnOpenSizeRaceKeepsTheStartingSize: a sizes' race that ends open does not recommend its noisy leader (six
// demo runs picked 8, 8, 32, 4, 4 and 8): it keeps the starting size when that lies within the sizes not shown
// worse, else the nearest of them; a decided race recommends its smallest size shown within.
func TestAnOpenSizeRaceKeepsTheStartingSize(t *testing.T) {
	open, win, drop, within := experiment.StatusOpen, experiment.StatusWinner, experiment.StatusDropped, experiment.StatusWithin
	for _, c := range []struct {
		name     string
		start    int
		sizes    []int
		out      *experiment.Outcome
		want     int
		kept     bool
		compared string // the row's comparison; "" for a size not raced
	}{
		{"start between raced sizes", 5, []int{2, 4, 8, 16}, sizesOutcome(3, 2, open, open, win, open), 5, true, ""},
		{"start raced", 8, []int{2, 4, 8, 16}, sizesOutcome(3, 1, open, win, open, open), 8, true, "max_children=8 vs 16"},
		{"start below the range", 5, []int{4, 8, 16, 32}, sizesOutcome(2, 3, drop, open, open, win), 8, false, "max_children=8 vs 16"},
		{"start above the range", 50, []int{4, 8, 16}, sizesOutcome(1, 0, win, open, open), 16, false, "max_children=16 vs 8"},
		// Within one doubling above the largest size not shown worse: kept (WordPress's 1, 2 and 4 against 5).
		{"start just above the range", 5, []int{1, 2, 4}, sizesOutcome(1, 2, drop, open, win), 5, true, ""},
		{"start just above a size shown worse", 5, []int{1, 2, 4}, sizesOutcome(1, 1, open, win, drop), 2, false, "max_children=2 vs 4"},
		// A size shown worse (or failed) inside the range is never the pick, nor is a size beside it.
		{"start raced and shown worse", 8, []int{4, 8, 16}, sizesOutcome(2, 0, win, drop, open), 16, false, "max_children=16 vs 8"},
		{"start beside a size that failed", 6, []int{4, 8, 16}, sizesOutcome(2, 0, win, experiment.StatusError, open), 4, false, "max_children=4 vs 16"},
		// The first size shown within the margin while a smaller one is open: decided on it, the smaller open.
		{"shown within, a smaller size open", 5, []int{2, 4, 8, 16}, shownWithin(sizesOutcome(3, 2, open, open, win, within), 2,
			experiment.NoteOpenBefore), 8, false, "max_children=8 vs 16"},
		{"decided", 5, []int{2, 4, 8, 16}, shownWithin(sizesOutcome(3, 2, drop, drop, win, within), 2, ""), 8, false,
			"max_children=8 vs 16"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tu := &tuner{o: Options{Base: knob.Config{MaxChildren: c.start}, MinEffect: 0.03}, costs: newCosts()}
			got := tu.sizesDone(c.sizes, arms.TrialSpec{Conc: 32, Metric: MetricGoodput}, c.out)
			rows, comps := tu.log.rows()
			ps, row := tu.pool, rows[0]
			if got != c.want || row.Value != strconv.Itoa(c.want) || ps.Kept != c.kept || row.Compared != c.compared || row.Vs.String() != c.compared {
				t.Fatalf("pick %d, row %q compared %q, kept %v: want %d, compared %q, kept %v (%s)", got, row.Value, row.Compared,
					ps.Kept, c.want, c.compared, c.kept, row.Note)
			}
			winners, accepted := 0, 0
			for _, sr := range ps.Sizes {
				if sr.Status == experiment.StatusWinner {
					winners++
				}
			}
			for _, cm := range comps {
				if cm.Accepted {
					accepted++
					if cm.Config != "max_children="+strconv.Itoa(c.want) {
						t.Errorf("%s accepted, the pick is %d", cm.Config, c.want)
					}
				}
			}
			// The pick is marked once where it was raced, and its comparison accepted unless it is the best.
			raced := slices.Contains(c.sizes, c.want)
			if (winners == 1) != raced || winners > 1 || (accepted == 1) != (raced && c.want != c.sizes[c.out.Best]) {
				t.Errorf("%d sizes marked the pick, %d comparisons accepted; the pick raced: %v", winners, accepted, raced)
			}
			decided := c.out.Arms[c.out.Winner].Within
			if c.name == "shown within, a smaller size open" && !strings.Contains(row.Note, "not yet shown: 2, 4") {
				t.Errorf("the sizes before the pick are open, and the row does not say so: %s", row.Note)
			}
			if !decided && (row.Verdict != stats.Inconclusive || ps.Decided) {
				t.Errorf("an open race: verdict %s, decided %v", row.Verdict, ps.Decided)
			}
			// Open, the row says what would decide it: its first open size's rounds, at a second a round of each.
			open := slices.ContainsFunc(c.out.Arms, func(a experiment.ArmResult) bool { return a.Status == experiment.StatusOpen && a.Vs != nil })
			if want := "about 40 rounds"; !decided && open && !strings.HasPrefix(row.Need, want) || (decided || !open) && row.Need != "" {
				t.Errorf("need %q; want it to begin %q where a size is open and the race undecided, else none", row.Need, want)
			}
			// Decided, the claim is one-sided: not worse than the best by more than the margin, with the interval
			// that shows it, never no_difference.
			if decided && (row.Verdict != NonInferior || !ps.Decided || row.CILowPct == 0 && row.CIHighPct == 0) {
				t.Errorf("a decided race: verdict %s, decided %v, interval [%v, %v]", row.Verdict, ps.Decided, row.CILowPct, row.CIHighPct)
			}
			t.Log(row.Note)
		})
	}
}

// TestAnOpenSizeRaceKeepsNoStartingSizeBeyondMemory: just above the largest size, the starting size is kept only
// where memory allows it.
func TestAnOpenSizeRaceKeepsNoStartingSizeBeyondMemory(t *testing.T) {
	open, win := experiment.StatusOpen, experiment.StatusWinner
	tu := &tuner{o: Options{Base: knob.Config{MaxChildren: 5}, MinEffect: 0.03}, pool: &PoolSize{MemoryLimit: 4}, costs: newCosts()}
	if got := tu.sizesDone([]int{1, 2, 4}, arms.TrialSpec{Conc: 4, Metric: MetricGoodput}, sizesOutcome(1, 2, open, open, win)); got != 4 {
		t.Errorf("memory allows 4: picked %d", got)
	}
}
