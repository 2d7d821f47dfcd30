package report

import (
	"bytes"
	"html"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/apply"
	"github.com/phptune/phptune/internal/stats"
	"github.com/phptune/phptune/internal/tune"
)

// TestHeadlineSaysWhatWouldDecide: an inconclusive row of the final says how many rounds, and how much more
// time at the final's pace, would decide it; a decided one says nothing of the kind.
func TestHeadlineSaysWhatWouldDecide(t *testing.T) {
	h := &headlineModel{Baseline: "Debian's defaults", Rounds: 12, RoundS: 2.5}
	open := &stats.Comparison{N: 12, Estimate: 0.02, Lo: -0.2, Hi: 0.25, Verdict: stats.Inconclusive, RoundsNeeded: 60}
	far := &stats.Comparison{N: 12, Estimate: 0.001, Lo: -0.2, Hi: 0.25, Verdict: stats.Inconclusive, RoundsNeeded: 1000}
	done := &stats.Comparison{Estimate: 0.3, Lo: 0.1, Hi: 0.5, Verdict: stats.Better}
	f := headlineFigure{Metric: "capacity", Rec: 200, Base: 150, Rule: 160, VsBase: versusOf(h, open), VsRule: versusOf(h, done)}
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
	if strings.Contains(out, "raced in the first") {
		t.Errorf("a comparison raced in every round said to have yielded:\n%s", out)
	}

	// The rule of thumb yielded after 4 of 12 rounds: its row says so, and counts its need from its own rounds.
	yielded := &stats.Comparison{N: 4, Estimate: 0.03, Lo: -0.3, Hi: 0.4, Verdict: stats.Inconclusive, RoundsNeeded: 52}
	f.VsRule = versusOf(h, yielded)
	b.Reset()
	headlineTable(h, f).write(&b, 4, 120)
	out = b.String()
	if !strings.Contains(out, "raced in the first 4 of the 12 rounds only") || !strings.Contains(out, "about 52 rounds (2m0s more)") {
		t.Errorf("headline table:\n%s\nwant the rule of thumb's row to say it ran 4 of 12 rounds and needs 48 more", out)
	}

	// Decided before the final's last round: its rounds are said, not read as the final's 12.
	f.VsRule = versusOf(h, &stats.Comparison{N: 10, Estimate: 0.3, Lo: 0.1, Hi: 0.5, Verdict: stats.Better})
	b.Reset()
	headlineTable(h, f).write(&b, 4, 120)
	if out = b.String(); !strings.Contains(out, "decided in the first 10 of the 12 rounds") {
		t.Errorf("headline table:\n%s\nwant the rule of thumb's row to say it was decided in 10 of the 12 rounds", out)
	}
}

// TestARecommendationThatIsTheStartingPoint: where nothing was shown better, the headline says the recommendation
// is the starting point and compares it with the rule of thumb alone; with no other configuration, nothing.
func TestARecommendationThatIsTheStartingPoint(t *testing.T) {
	r := recordedTune(t)
	r.Recommendation = r.Baseline
	h := r.Headline
	h.Same, h.VsDebian, h.CapacityVsDebian, h.DebianRPS, h.Rounds = true, nil, nil, h.RecommendationRPS, 12
	r.Apply, r.Files = &apply.Plan{}, map[string]string{apply.PoolName: "/tmp/run/" + apply.PoolName}
	var b strings.Builder
	Tune(&b, r)
	out := b.String()
	for _, want := range []string{"It is Debian's defaults: no knob was shown better", "recommendation = Debian's defaults",
		"against the rule of thumb alone", "The final comparison", "Nothing to apply: the recommendation is Debian's defaults"} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\n    Debian's defaults ") {
		t.Errorf("a row sets the recommendation against itself:\n%s", out)
	}
	var page bytes.Buffer
	if err := TuneHTML(&page, r, nil); err != nil {
		t.Fatal(err)
	}
	p := html.UnescapeString(page.String())
	for _, want := range []string{"no change</div>", "the recommendation is Debian's defaults", "nothing to change", "against the rule of thumb"} {
		if !strings.Contains(p, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(p, "against Debian's defaults</div>") {
		t.Error("the page sets the recommendation against itself")
	}

	// The budget ended before the rule of thumb was compared: no figures.
	r.Headline = &tune.Headline{Baseline: "Debian's defaults", RuleOfThumb: "pm=static", Same: true}
	b.Reset()
	Tune(&b, r)
	if out := b.String(); !strings.Contains(out, "the budget ended before it could set it") ||
		strings.Contains(out, "The final comparison,") {
		t.Errorf("nothing compared for the budget:\n%s", out)
	}

	// The recommendation is the rule of thumb too: nothing was compared.
	r.Headline = &tune.Headline{Baseline: "Debian's defaults", RuleOfThumb: r.Baseline.String(), Same: true, RuleSame: true}
	b.Reset()
	Tune(&b, r)
	if out := b.String(); !strings.Contains(out, "(it is the rule of thumb too)") || strings.Contains(out, "The final comparison") {
		t.Errorf("nothing compared:\n%s", out)
	}
	page.Reset()
	if err := TuneHTML(&page, r, nil); err != nil {
		t.Fatal(err)
	}
	if p := page.String(); !strings.Contains(p, "no change</div>") || strings.Contains(p, "<svg class=\"headline") {
		t.Error("the page of a run with nothing compared")
	}
}

// TestARecommendationThatDiffersOnlyOverHours: a recommendation that is the starting point but for a
// pm.max_requests no worker reaches in the run says so, was not raced against it, and is still to be applied.
func TestARecommendationThatDiffersOnlyOverHours(t *testing.T) {
	r := recordedTune(t)
	r.Recommendation = r.Baseline
	r.Recommendation.MaxRequests = 230000
	h := r.Headline
	h.Same, h.SameBut, h.Reach = true, "max_requests=230000", 180000
	h.VsDebian, h.CapacityVsDebian, h.DebianRPS, h.Rounds = nil, nil, h.RecommendationRPS, 12
	r.Apply, r.Files = &apply.Plan{}, map[string]string{apply.PoolName: "/tmp/run/" + apply.PoolName}
	var b strings.Builder
	Tune(&b, r)
	out := b.String()
	for _, want := range []string{"It is Debian's defaults but for max_requests=230000", "180,000 requests), so the two",
		"recommendation = Debian's defaults in a run", "against the rule of thumb alone"} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Nothing to apply") || strings.Contains(out, "nothing to change") {
		t.Errorf("a change to apply is called nothing:\n%s", out)
	}
	var page bytes.Buffer
	if err := TuneHTML(&page, r, nil); err != nil {
		t.Fatal(err)
	}
	p := html.UnescapeString(page.String())
	for _, want := range []string{"memory only</div>", "but for max_requests=230000", "it was not raced"} {
		if !strings.Contains(p, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(p, "nothing to change") {
		t.Error("the page calls a change to apply nothing")
	}
}
