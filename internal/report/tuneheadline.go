package report

import (
	"fmt"

	"github.com/phptune/phptune/internal/stats"
	"github.com/phptune/phptune/internal/tune"
)

// headlineModel is the final comparison: the recommendation against the starting point and the rule of
// thumb, in the same interleaved rounds, each metric with the table's figures.
type headlineModel struct {
	Baseline string    `json:"baseline"` // what the starting point is called: Debian's defaults, or your configuration
	Rounds   int       `json:"rounds"`
	Load     int       `json:"connections"`
	RoundS   float64   `json:"-"` // a round's seconds, on average
	Rec      configRow `json:"-"`
	Base     configRow `json:"-"`
	Rule     configRow `json:"-"`
	// RuleConfig is the rule of thumb's configuration.
	RuleConfig string `json:"rule_of_thumb"`
	// Same: the recommendation is the starting point, not raced against itself; RuleSame: it is the rule of thumb.
	Same     bool `json:"same_as_baseline,omitempty"`
	RuleSame bool `json:"rule_of_thumb_same,omitempty"`
	// SameBut, with Same: a setting that differs all the same, one that cannot act within a run (Headline.SameBut);
	// Reach, the requests a worker could serve in the run.
	SameBut string `json:"same_but,omitempty"`
	Reach   int64  `json:"-"`
	// Figures are the metrics compared: requests/s, and any other the final measures, each with its intervals.
	Figures []headlineFigure `json:"figures,omitempty"`
	// Tail is the recommendation's p99 against the starting point's on the same rounds (nil: not compared).
	Tail *tailModel `json:"p99,omitempty"`
}

// headlineFigure is one metric of the final comparison: each configuration's median over its rounds, and the
// recommendation against the two others.
type headlineFigure struct {
	Metric string  `json:"metric"`
	Rec    float64 `json:"recommendation"`
	Base   float64 `json:"baseline"`
	Rule   float64 `json:"rule_of_thumb"`
	// VsBase and VsRule are the recommendation against each: positive, the recommendation is the better.
	VsBase *versus `json:"vs_baseline,omitempty"`
	VsRule *versus `json:"vs_rule_of_thumb,omitempty"`
}

// headlineOf is r's final comparison with its figures taken from rows (configRows), so that the headline
// and the table cannot disagree; nil without a headline.
func headlineOf(r *tune.Result, rows []configRow) *headlineModel {
	h := r.Headline
	if h == nil {
		return nil
	}
	n := namerOf(r)
	m := &headlineModel{Baseline: n.baseName, Rounds: h.Rounds, RoundS: h.RoundS, Load: r.Plan.Concurrency, Same: h.Same, RuleSame: h.RuleSame,
		SameBut: h.SameBut, Reach: h.Reach, RuleConfig: shownConfig(h.RuleOfThumb)}
	for _, t := range r.Trials {
		if t.Phase == "final" {
			m.Load = t.Concurrency
			break
		}
	}
	find := func(cfg string, fallback float64) configRow {
		for _, row := range rows {
			if row.Config == cfg && row.Final {
				return row
			}
		}
		return configRow{Name: n.name(cfg), Config: cfg, Load: m.Load, Goodput: fallback, Final: true}
	}
	m.Rec, m.Base, m.Rule = find(n.rec, h.RecommendationRPS), find(n.base, h.DebianRPS), find(n.rule, h.RuleOfThumbRPS)
	if h.Same && (h.RuleSame || h.Rounds == 0) {
		return m // the recommendation is the starting point, and nothing else was compared
	}
	m.Figures = []headlineFigure{{Metric: tune.MetricGoodput, Rec: m.Rec.Goodput, Base: m.Base.Goodput, Rule: m.Rule.Goodput,
		VsBase: versusOf(m, h.VsDebian), VsRule: versusOf(m, h.VsRuleOfThumb)}}
	// Capacity, decided on the same rounds: requests per CPU-second of php-fpm and nginx, the rows' Capacity.
	if h.CapacityVsDebian != nil || h.CapacityVsRuleOfThumb != nil {
		m.Figures = append(m.Figures, headlineFigure{Metric: tune.MetricCapacity, Rec: m.Rec.Capacity, Base: m.Base.Capacity,
			Rule: m.Rule.Capacity, VsBase: versusOf(m, h.CapacityVsDebian), VsRule: versusOf(m, h.CapacityVsRuleOfThumb)})
	}
	m.Tail = tailOf(m, h)
	return m
}

// versus is the recommendation against one configuration of the final comparison: the change (positive: the
// recommendation is the better), its verdict, the rounds it rests on, and what would decide it when undecided.
type versus struct {
	Change  change        `json:"change"`
	Verdict stats.Verdict `json:"verdict"`
	Rounds  int           `json:"rounds"`
	Level   float64       `json:"-"`
	// Need is what would decide an inconclusive comparison ("about 60 rounds (2m0s more)"); RoundsNote says that it
	// ran in the final's first rounds only, so that its rounds are not read as the final's.
	Need       string `json:"would_need,omitempty"`
	RoundsNote string `json:"rounds_note,omitempty"`
}

// versusOf states c, a comparison of the final, as every renderer prints it (nil for nil).
func versusOf(h *headlineModel, c *stats.Comparison) *versus {
	if c == nil {
		return nil
	}
	v := &versus{Change: change{100 * c.Estimate, 100 * c.Lo, 100 * c.Hi}, Verdict: c.Verdict, Rounds: c.N,
		Level: statLevel(*c), Need: headlineNeed(h, c), RoundsNote: yieldedText(h, c)}
	if v.RoundsNote == "" && c.N > 0 && c.N < h.Rounds {
		v.RoundsNote = fmt.Sprintf("decided in the first %d of the %d rounds", c.N, h.Rounds)
	}
	return v
}
