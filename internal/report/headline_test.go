package report

import (
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/stats"
)

// TestHeadlineSaysWhatWouldDecide: an inconclusive row of the final says how many rounds, and how much more
// time at the final's pace, would decide it; a decided one says nothing of the kind.
func TestHeadlineSaysWhatWouldDecide(t *testing.T) {
	h := &headlineModel{Baseline: "Debian's defaults", Rounds: 12, RoundS: 2.5}
	open := &stats.Comparison{Estimate: 0.02, Lo: -0.2, Hi: 0.25, Verdict: stats.Inconclusive, RoundsNeeded: 60}
	far := &stats.Comparison{Estimate: 0.001, Lo: -0.2, Hi: 0.25, Verdict: stats.Inconclusive, RoundsNeeded: 1000}
	done := &stats.Comparison{Estimate: 0.3, Lo: 0.1, Hi: 0.5, Verdict: stats.Better}
	f := headlineFigure{Metric: "capacity", Rec: 200, Base: 150, Rule: 160, VsBase: open, VsRule: done}
	var b strings.Builder
	headlineTable(h, f).write(&b, 4, 120)
	out := b.String()
	// 48 rounds more at 2.5 s: 2 minutes.
	if !strings.Contains(out, "deciding it would need about 60 rounds (2m0s more)") || strings.Count(out, "deciding it") != 1 {
		t.Errorf("headline table:\n%s\nwant the inconclusive row, and only it, to say about 60 rounds (2m0s more)", out)
	}
	if got := headlineNeed(h, far); !strings.HasPrefix(got, "more than 1000 rounds") {
		t.Errorf("a difference about the minimum effect: %q", got)
	}
	if got := headlineNeed(&headlineModel{Rounds: 12}, open); got != "" {
		t.Errorf("no time a round known: %q, want nothing", got)
	}
}
