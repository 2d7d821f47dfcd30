package tune

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/experiment"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/stats"
)

// TestARowSaysTheRunStopped: a race whose incumbent failed to start says that the run stopped, and why, not
// that the budget ended; one interrupted after some rounds says so beside its figures.
func TestARowSaysTheRunStopped(t *testing.T) {
	d := &decider{costs: newCosts()}
	k, _ := knob.ByName("jit")
	rc := &raced{r: race{knob: k, from: knob.Debian(), values: []string{"tracing"}}, cfgs: []knob.Config{knob.Debian(), knob.Debian()},
		stopped: errors.New("GET / did not answer")}
	out := &experiment.Outcome{Ended: experiment.EndError, Arms: []experiment.ArmResult{{Status: experiment.StatusError}, {Status: experiment.StatusOpen}}}
	d.report(rc, out)
	if want := "not tried: the run stopped before its first round: GET / did not answer"; rc.row.Note != want ||
		rc.row.State != StateNotTried || rc.row.Reason != want[len(notTriedWords):] {
		t.Errorf("row %+v, want not tried, the note %q", rc.row, want)
	}
	rc.stopped = context.Canceled
	out.Ended, out.Rounds = experiment.EndInterrupted, 3
	out.Arms[1].Vs = &stats.Comparison{Verdict: stats.Inconclusive}
	d.report(rc, out)
	if !strings.Contains(rc.row.Note, "the run was interrupted after 3 rounds") || rc.row.Verdict != stats.Inconclusive {
		t.Errorf("row %+v: want inconclusive, saying the run was interrupted after 3 rounds", rc.row)
	}
}
