package report

import (
	"fmt"
	"strings"

	"github.com/phptune/phptune/internal/stats"
	"github.com/phptune/phptune/internal/tune"
)

// tailModel is the recommendation's p99 against the starting point's in the final comparison (tune.Headline's
// P99VsDebian): the p99 is judged beside goodput and capacity on the same rounds, so that a recommendation whose
// tail is shown worse never reads as a plain gain.
type tailModel struct {
	RecUs  float64 `json:"recommendation_us"`
	BaseUs float64 `json:"baseline_us"`
	// Vs is the recommendation's p99 against the starting point's. Unlike the throughput figures', its change is
	// the p99's own (positive: the recommendation's is the higher); its verdict is about the recommendation as
	// theirs are (worse: its p99 shown higher by more than the minimum effect).
	Vs *versus `json:"vs_baseline"`
	// Warning, when the recommendation's p99 is shown worse, says so in a sentence: the summary's first.
	Warning string `json:"warning,omitempty"`
}

// tailOf is h's p99 comparison as every renderer prints it (nil without one).
func tailOf(m *headlineModel, h *tune.Headline) *tailModel {
	if h.P99VsDebian == nil || h.Same {
		return nil
	}
	t := &tailModel{RecUs: h.RecommendationP99Us, BaseUs: h.DebianP99Us, Vs: versusOf(m, h.P99VsDebian)}
	if t.Vs.Verdict == stats.Worse {
		t.Warning = fmt.Sprintf("The recommendation's p99 is shown worse than %s: %s against %s, %s %s in %d rounds "+
			"side by side%s. Weigh that against what it gains before applying it, or keep %s.",
			possessive(m.Baseline), us(t.RecUs), us(t.BaseUs), pctText(t.Vs.Change.Est), intervalText(&t.Vs.Change),
			t.Vs.Rounds, atConns(m.Load), m.Baseline)
	}
	return t
}

// tailPart is the p99 comparison in words ("5.10ms against 5.00ms, +2.0% [-30%, +49%], inconclusive").
func tailPart(t *tailModel) string {
	return fmt.Sprintf("%s against %s, %s %s, %s", us(t.RecUs), us(t.BaseUs), pctText(t.Vs.Change.Est),
		intervalText(&t.Vs.Change), verdictWord(t.Vs.Verdict))
}

// possessive is name's possessive: "Debian's defaults'", "your configuration's".
func possessive(name string) string {
	if strings.HasSuffix(name, "s") {
		return name + "'"
	}
	return name + "'s"
}

// tailCard is report.html's card of the recommendation's p99 against the starting point's.
func tailCard(h *headlineModel, t *tailModel) heroCard {
	sub := fmt.Sprintf("%s against %s, medians of their trials' p99s; %d interleaved rounds%s", msLabel(t.RecUs),
		msLabel(t.BaseUs), t.Vs.Rounds, atConns(h.Load))
	return heroCard{Big: changeHTML(t.Vs.Change.Est), Label: "p99 against " + h.Baseline, CI: "interval " +
		intervalHTML(&t.Vs.Change), Verdict: t.Vs.Verdict, Sub: sub}
}
