package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/phptune/phptune/internal/stats"
	"github.com/phptune/phptune/internal/tune"
)

// Tune writes tune's answer: one row a knob, then the headline.
func Tune(w io.Writer, r *tune.Result) {
	if r.Partial {
		fmt.Fprintf(w, "PARTIAL: the run stopped early; these are the results so far\n\n")
	}
	fmt.Fprintf(w, "phptune tune: %s, %d URL(s), %s of a %s budget\n", r.App, len(r.URLs), secs(r.ElapsedS), secs(r.BudgetS))
	if urls := urlList(r.URLs); len(urls) > 1 || (len(urls) == 1 && r.URLs[0].PeakMemory > 0) {
		fmt.Fprintf(w, "  URLs: %s\n", strings.Join(urls, ", "))
	}
	for _, b := range r.Builds {
		how := fmt.Sprintf("built in %s", secs(b.Seconds))
		if b.Cached {
			how = "from the build cache"
		}
		fmt.Fprintf(w, "  PHP %s trained on this mix (%s, outside the budget), raced as the knob php: %s\n", b.Variant, how, b.PHPFPM)
	}
	if s := r.Saturation; s != nil && len(s.Points) > 0 {
		fmt.Fprintf(w, "\n  Saturation (static pool of %d):", s.Pool)
		for _, p := range s.Points {
			fmt.Fprintf(w, "  c=%d %s", p.Concurrency, rate(p.RPS))
		}
		cpu := ""
		if c := r.Plan.CPUConcurrency; c > 0 && c != r.Plan.Concurrency {
			cpu = fmt.Sprintf(" (CPU trials %d)", c)
		}
		fmt.Fprintf(w, " req/s\n  %-13s knee at %d connections, peak at %d; knob comparisons load %d connections%s\n", "", s.Knee, s.Peak, r.Plan.Concurrency, cpu)
	}
	if p := r.PoolSize; p != nil {
		mem := "not limiting"
		if p.MemoryLimit > 0 {
			mem = fmt.Sprintf("%d children in %s (%.0f MiB shared + %.1f MiB each at peak)", p.MemoryLimit, mib(p.Memory), float64(p.SharedBytes)/(1<<20), float64(p.PerWorkerBytes)/(1<<20))
		}
		how := "from the knee"
		switch {
		case p.Note == "pinned":
			how = "(pinned)"
		case p.Note == tune.NotRemeasured:
			how = "from the knee (" + p.Note + ")"
		case len(p.Sizes) == 0 && p.Note != "":
			how = "(" + p.Note + ")"
		case len(p.Sizes) > 0 && p.Decided:
			how = fmt.Sprintf("(the smallest of %s shown within %.0f%% of the best, at %d connections)", sizeList(p.Sizes), 100*r.Plan.MinEffect, p.Load)
		case len(p.Sizes) > 0:
			how = fmt.Sprintf("(of %s at %d connections: the smallest whose estimate is within %.1f%% of the best; not yet shown)",
				sizeList(p.Sizes), p.Load, 50*r.Plan.MinEffect)
		}
		fmt.Fprintf(w, "  Pool size     CPU knee %d; memory: %s; chosen %d %s\n", p.Knee, mem, p.Chosen, how)
		if p.MemoryFrom != "" {
			fmt.Fprintf(w, "  %-13s %s for the pool: %s\n", "", mib(p.Memory), p.MemoryFrom)
		}
		if p.RangeLo > 0 {
			fmt.Fprintf(w, "  %-13s %s\n", "", sizeRange(p, r.Plan.MinEffect))
		}
	}
	fmt.Fprintf(w, "\n  %-19s %-20s %9s  %-20s %s\n", "knob", "value", "effect", "CI", "verdict")
	for _, k := range r.Knobs {
		val := unset(k.Value)
		if k.From != k.Value {
			val = unset(k.From) + " -> " + unset(k.Value)
		}
		eff, ci := "", ""
		if k.Compared != "" {
			eff = fmt.Sprintf("%+.1f%%", k.EffectPct)
			ci = fmt.Sprintf("[%+.1f%%, %+.1f%%]", k.CILowPct, k.CIHighPct)
		}
		verdict := string(k.Verdict)
		switch k.Verdict {
		case stats.NoDifference:
			verdict = "~ no_difference"
		case stats.Inconclusive:
			verdict = "? inconclusive"
		case "":
			verdict = "-"
		}
		fmt.Fprintf(w, "  %-19s %-20s %9s  %-20s %s", k.Name, val, eff, ci, verdict)
		if k.Compared != "" {
			fmt.Fprintf(w, "  (%s, %s, %d rounds)", k.Compared, metricShort(k.Metric), k.Rounds)
		}
		if k.Note != "" {
			fmt.Fprintf(w, "  %s", k.Note)
		}
		if k.Need != "" {
			fmt.Fprintf(w, "  would need %s", k.Need)
		}
		fmt.Fprintln(w)
	}
	if h := r.Headline; h != nil {
		fmt.Fprintf(w, "\n  Recommendation: %s\n", r.Recommendation)
		fmt.Fprintf(w, "  %-13s %s req/s\n", "it serves", rate(h.RecommendationRPS))
		name := "Debian"
		if h.Baseline != "" && h.Baseline != "Debian's defaults" {
			name = "your config"
		}
		fmt.Fprintf(w, "  %-13s %s req/s%s\n", name, rate(h.DebianRPS), vs(h.VsDebian))
		fmt.Fprintf(w, "  %-13s %s req/s%s   (%s)\n", "rule of thumb", rate(h.RuleOfThumbRPS), vs(h.VsRuleOfThumb), h.RuleOfThumb)
	}
	if c := r.P99Check; c != nil {
		fmt.Fprintf(w, "  %-13s p99 %s [%s, %s] at %s req/s open loop, goal %s: %s\n", "latency goal", us(c.P99Us), us(c.P99LoUs), us(c.P99HiUs),
			rate(c.Rate), us(c.GoalUs), p99Verdict(c))
	}
	if c := r.PeakCheck; c != nil {
		fmt.Fprintf(w, "  %-13s %s\n", "log's peak", peakRow(c))
	}
	for _, warn := range r.Warnings {
		fmt.Fprintf(w, "  warning: %s\n", warn)
	}
	fmt.Fprintf(w, "\n  %s\n", r.Note)
}

// vs says how the recommendation compares with another arm: the change of the recommendation against it.
func vs(c *stats.Comparison) string {
	if c == nil {
		return ""
	}
	v := string(c.Verdict)
	if v == "" {
		v = "no verdict"
	}
	return fmt.Sprintf("   recommendation %+.1f%% [%+.1f%%, %+.1f%%] %s", 100*c.Estimate, 100*c.Lo, 100*c.Hi, v)
}

// metricShort names a knob's metric in the terminal table.
func metricShort(m string) string {
	switch m {
	case tune.MetricCPU:
		return "req/CPU-s"
	case tune.MetricWork:
		return "work"
	}
	return "req/s"
}

func unset(v string) string {
	if v == "" {
		return "(unset)"
	}
	return v
}

// urlList names each URL with its weight and, when known, PHP's peak memory for one request of it; a URL that
// needs three times the median of the others or more is marked, as the pool must be sized for it.
func urlList(urls []tune.URL) []string {
	var out []string
	for i, u := range urls {
		s := strings.TrimSpace(u.Method + " " + u.Path)
		s += fmt.Sprintf(" (weight %d", u.Weight)
		if u.PeakMemory > 0 {
			s += ", " + mibs(float64(u.PeakMemory)) + " peak"
			var others []float64
			for j, o := range urls {
				if j != i && o.PeakMemory > 0 {
					others = append(others, float64(o.PeakMemory))
				}
			}
			if m := stats.Median(others); len(others) > 0 && float64(u.PeakMemory) >= 3*m {
				s += fmt.Sprintf(", %.0fx the other URLs'", float64(u.PeakMemory)/m)
			}
		}
		out = append(out, s+")")
	}
	return out
}

func mib(b int64) string { return fmt.Sprintf("%d MiB", b>>20) }

// p99Verdict says how the p99 stands against the goal; results from before the interval have no Verdict.
func p99Verdict(c *tune.P99Check) string {
	switch {
	case c.Verdict == "undecided":
		return "undecided (its interval straddles the goal: a longer run or more --budget decides)"
	case c.Met:
		return "met"
	}
	return "NOT met"
}

// sizeList names the pool sizes raced: "4, 8, 16".
func sizeList(sizes []tune.SizeResult) string {
	var out []string
	for _, s := range sizes {
		out = append(out, fmt.Sprint(s.Size))
	}
	return strings.Join(out, ", ")
}

// sizeRange says which pool sizes serve within the margin of the best: shown, or not yet shown worse.
func sizeRange(p *tune.PoolSize, minEffect float64) string {
	r := fmt.Sprintf("sizes %d to %d serve within %.0f%% of the best", p.RangeLo, p.RangeHi, 100*minEffect)
	if p.RangeLo == p.RangeHi {
		r = fmt.Sprintf("only size %d serves within %.0f%% of the best", p.RangeLo, 100*minEffect)
	}
	var worse []string
	for _, s := range p.Sizes {
		if s.Status == "dropped" {
			worse = append(worse, fmt.Sprint(s.Size))
		}
	}
	if len(worse) > 0 {
		r += "; shown worse by more: " + strings.Join(worse, ", ")
	}
	return r
}
