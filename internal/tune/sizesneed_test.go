package tune

import (
	"testing"
	"time"

	"github.com/phptune/phptune/internal/experiment"
	"github.com/phptune/phptune/internal/stats"
)

// TestSizesNeedIsTheRacesAnswer: an open sizes' race states what its answer needs (Outcome.Needed), not what its
// first open size's comparison does: WordPress's row read "about 5 rounds (6s more)", size 1's to be shown worse,
// where showing 2 within the margin of 4 needed minutes. Without the race's figure it falls back to that size's.
func TestSizesNeedIsTheRacesAnswer(t *testing.T) {
	out := &experiment.Outcome{Rounds: 4, Needed: 40, Arms: []experiment.ArmResult{
		{Status: experiment.StatusOpen, Vs: &stats.Comparison{RoundsNeeded: 5}},
		{Status: experiment.StatusWinner},
		{Status: experiment.StatusOpen, Vs: &stats.Comparison{RoundsNeeded: 76}},
	}}
	// 36 rounds more of the 3 sizes at 2 s a trial
	if got, want := sizesNeed(out, 2*time.Second), "about 40 rounds (3m36s more)"; got != want {
		t.Errorf("sizesNeed = %q, want %q", got, want)
	}
	out.Needed = 0
	if got, want := sizesNeed(out, 2*time.Second), "about 5 rounds (6s more)"; got != want {
		t.Errorf("without the race's own figure, sizesNeed = %q, want %q", got, want)
	}
}
