package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/phptune/phptune/internal/experiment"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/stats"
	"github.com/phptune/phptune/internal/tune"
)

// saturationChart is throughput against concurrency: each point's figure (the sweep model's: the median of its
// trials, as the text's table) with the 95% interval of their mean, the knee and the peak.
func saturationChart(s *sweepModel) *chart {
	if s == nil {
		return nil
	}
	c := &chart{ID: "saturation", Title: "Throughput against concurrency", W: chartW, H: 340}
	left, bottom := 64.0, c.H-padBot
	lo, hi := float64(s.Points[0].Conns), float64(s.Points[0].Conns)
	top := 0.0
	for _, p := range s.Points {
		lo, hi = math.Min(lo, float64(p.Conns)), math.Max(hi, float64(p.Conns))
		top = math.Max(top, math.Max(p.Hi, p.RPS))
	}
	xs := scale{D0: math.Max(lo/1.5, 0.5), D1: hi * 1.5, R0: left, R1: c.W - padRight, Log: true}
	yt := niceTicks(0, top*1.05, 6)
	ys := scale{D0: 0, D1: math.Max(yt[len(yt)-1], top*1.05), R0: bottom, R1: padTop}
	var xt []float64
	for _, p := range s.Points {
		xt = append(xt, float64(p.Conns))
	}
	yAxis(c, ys, yt, fnum, left, c.W-padRight, "requests/s")
	xAxis(c, xs, xt, func(v float64) string { return fmt.Sprint(int(v)) }, padTop, bottom, "concurrent connections")
	if s.Knee > 0 {
		x := xs.at(float64(s.Knee))
		c.line(x, padTop, x, bottom, "knee")
		c.text(x+4, padTop+12, fmt.Sprintf("levels off: %d", s.Knee), "start", "knee-label")
	}
	var d strings.Builder
	for i, p := range s.Points {
		x, y := xs.at(float64(p.Conns)), ys.at(p.RPS)
		if i == 0 {
			fmt.Fprintf(&d, "M%.1f %.1f", x, y)
		} else {
			fmt.Fprintf(&d, " L%.1f %.1f", x, y)
		}
	}
	c.add(el{Kind: "path", D: d.String(), Class: "curve"})
	for _, p := range s.Points {
		x := xs.at(float64(p.Conns))
		if p.Hi > p.Lo {
			y0, y1 := ys.at(math.Max(p.Lo, 0)), ys.at(p.Hi)
			c.line(x, y0, x, y1, "ci")
			c.line(x-5, y0, x+5, y0, "ci")
			c.line(x-5, y1, x+5, y1, "ci")
		}
		class := "point"
		if p.Conns == s.Peak {
			class += " peak"
		}
		tip := fmt.Sprintf("%d connections: %s req/s (%s of the trials; their mean %s, 95%% interval %s to %s), p99 %s", p.Conns,
			fnum(p.RPS), s.figureWord(), fnum(p.Mean), fnum(p.Lo), fnum(p.Hi), msLabel(p.P99Us))
		if p.Errors > 0 {
			tip += fmt.Sprintf(", %d errors", p.Errors)
		}
		c.mark(el{Kind: "circle", X: x, Y: ys.at(p.RPS), R: 5, Class: class, Title: tip})
	}
	c.Legend = []legendItem{{"point", s.figureWord() + " of the trials"}, {"ci", "95% interval of their mean"}}
	if s.Peak > 0 {
		c.Legend = append(c.Legend, legendItem{"point peak", "peak"})
	}
	if s.Knee > 0 {
		c.Legend = append(c.Legend, legendItem{"knee", "where throughput levels off (the knee)"})
	}
	return c
}

// latencyChart shows, per configuration and load, the medians over its throughput trials of p50, p90, p99 and
// p99.9 on a log scale; a row at another load than the comparisons' says its load.
func latencyChart(cs []configRow, conc int) *chart {
	var rows []configRow
	for _, v := range cs {
		if v.P50 > 0 {
			rows = append(rows, v)
		}
	}
	if len(rows) == 0 {
		return nil
	}
	labels := make([]string, len(rows))
	for i, v := range rows {
		labels[i] = latencyLabel(v, conc)
	}
	left := labelColumn(labels)
	c := &chart{ID: "latency", Title: "Latency percentiles per configuration", W: chartW, H: padTop + 30*float64(len(rows)) + padBot}
	bottom := c.H - padBot
	lo, hi := math.Inf(1), 0.0
	for _, v := range rows {
		for _, x := range []float64{v.P50, v.P90, v.P99, v.P999} {
			if x > 0 {
				lo, hi = math.Min(lo, x), math.Max(hi, x)
			}
		}
	}
	xs := scale{D0: lo / 1.3, D1: hi * 1.3, R0: left, R1: c.W - padRight, Log: true}
	xAxis(c, xs, logTicks(xs.D0, xs.D1), msLabel, padTop, bottom, "latency (log scale), median over each configuration's throughput trials")
	for i, v := range rows {
		y := padTop + 30*float64(i) + 15
		c.text(left-10, y+4, short(labels[i], maxLabel), "end", "row-label")
		ends := []float64{}
		for _, x := range []float64{v.P50, v.P90, v.P99, v.P999} {
			if x > 0 {
				ends = append(ends, x)
			}
		}
		c.line(xs.at(ends[0]), y, xs.at(ends[len(ends)-1]), y, "range")
		for j, p := range []struct {
			name string
			v    float64
		}{{"p50", v.P50}, {"p90", v.P90}, {"p99", v.P99}, {"p99.9", v.P999}} {
			if p.v <= 0 {
				continue
			}
			class := []string{"p50", "p90", "p99", "p999"}[j]
			c.mark(el{Kind: "circle", X: xs.at(p.v), Y: y, R: 5, Class: class,
				Title: fmt.Sprintf("%s at %d connections: %s %s (median of %d trials)", v.Name, v.Load, p.name, msLabel(p.v), v.GoodputTrials)})
		}
	}
	c.Legend = []legendItem{{"p50", "p50"}, {"p90", "p90"}, {"p99", "p99"}, {"p999", "p99.9"}}
	return c
}

// latencyLabel names a latency row: the configuration, and its load when it is not the comparisons'.
func latencyLabel(v configRow, conc int) string {
	if v.Load == conc {
		return v.Name
	}
	return fmt.Sprintf("%s, %d conn.", v.Name, v.Load)
}

// latencyCaption says what the latency chart shows and at what load.
func latencyCaption(cs []configRow, conc int) string {
	text := "For each configuration measured in throughput trials after the sweep, the median over its trials of each trial's percentile " +
		"(the final comparison's trials for its three configurations)."
	if conc > 0 {
		text += fmt.Sprintf(" The knob comparisons load %d connections; a row measured at another load says so.", conc)
	}
	return text
}

// memoryChart shows each configuration's peak private memory per worker against what the budget allows a
// worker at the chosen pool size (a log scale when the budget is far above the workers' needs).
func memoryChart(rows []memRow, ps *tune.PoolSize) *chart {
	if len(rows) == 0 {
		return nil
	}
	budget := 0.0
	if ps != nil && ps.Memory > 0 && ps.Chosen > 0 {
		budget = float64(ps.Memory-ps.SharedBytes) / float64(ps.Chosen)
	}
	counted := 0.0
	if ps != nil {
		counted = float64(ps.PerWorkerBytes)
	}
	labels := make([]string, len(rows))
	for i, v := range rows {
		labels[i] = v.Name
	}
	left := labelColumn(labels)
	c := &chart{ID: "memory", Title: "Memory per worker against the budget", W: chartW, H: padTop + 30*float64(len(rows)) + padBot + 10}
	bottom := c.H - padBot
	hi := math.Max(budget, counted)
	lo := math.Inf(1)
	for _, v := range rows {
		hi = math.Max(hi, float64(v.PeakUSS))
		lo = math.Min(lo, float64(v.PeakUSS))
	}
	xs := scale{D0: 0, D1: hi * 1.1, R0: left, R1: c.W - padRight}
	ticks := bytesTicks(hi * 1.1)
	title := "peak private memory (USS) per worker"
	if budget > 20*lo {
		xs = scale{D0: lo / 2, D1: hi * 1.5, R0: left, R1: c.W - padRight, Log: true}
		ticks = pow2Ticks(xs.D0, xs.D1)
		title += " (log scale)"
	}
	xAxis(c, xs, ticks, bytesLabel, padTop, bottom, title)
	base := xs.at(xs.D0)
	for i, v := range rows {
		y := padTop + 30*float64(i) + 5
		c.text(left-10, y+14, short(v.Name, maxLabel), "end", "row-label")
		w := xs.at(float64(v.PeakUSS)) - base
		tip := fmt.Sprintf("%s: peak USS %s per worker", v.Name, bytesLabel(float64(v.PeakUSS)))
		if v.MeanPSS > 0 {
			tip += fmt.Sprintf(", mean PSS %s", bytesLabel(float64(v.MeanPSS)))
		}
		tip += " (in trials at " + joinInts(v.Loads) + " connections)"
		c.mark(el{Kind: "rect", X: base, Y: y, W: math.Max(w, 1), H: 20, Class: "bar", Title: tip})
	}
	if counted > 0 {
		x := xs.at(counted)
		c.line(x, padTop-6, x, bottom, "counted")
		c.text(x+4, bottom-3, "counted "+bytesLabel(counted), "start", "counted-label")
	}
	if budget > 0 {
		x := xs.at(budget)
		c.line(x, padTop-6, x, bottom, "budget")
		label := fmt.Sprintf("budget %s / worker at %d", bytesLabel(budget), ps.Chosen)
		// Left of the line, unless that would run into the row labels.
		if x-7*float64(len(label)) < left {
			c.text(x+4, padTop-10, label, "start", "budget-label")
		} else {
			c.text(x-4, padTop-10, label, "end", "budget-label")
		}
	}
	c.Legend = []legendItem{{"bar", "peak private memory per worker"}, {"counted", "counted per worker in sizing"}, {"budget", "budget per worker"}}
	return c
}

// maxLabel is the longest row label a chart draws; the whole name stays in the tooltips and tables.
const maxLabel = 39

// labelColumn is the width of a chart's label column for these labels: 8 px a character at 12.5 px (the
// widest glyphs' average), within limits that leave the plot room.
func labelColumn(labels []string) float64 {
	longest := 0
	for _, l := range labels {
		longest = max(longest, min(textLen(l), maxLabel))
	}
	return min(max(24+8*float64(longest), 150), 24+8*maxLabel)
}

func joinInts(v []int) string {
	var s []string
	for _, x := range v {
		s = append(s, fmt.Sprint(x))
	}
	return strings.Join(s, ", ")
}

// effectsChart is a forest plot: each comparison's effect with its CI, coloured by verdict, stated as the
// kept value's against the other wherever the kept value is one of the two (as the table states it).
func effectsChart(r *tune.Result) *chart {
	kept := map[string]string{}
	for _, k := range r.Knobs {
		kept[k.Name] = k.Value
	}
	var rows []forestRow
	for _, cmp := range r.Comparisons {
		s := cmp.Stats
		// An interval that is still unbounded (too few rounds for its level) says nothing a chart can show.
		if s.N < 2 || s.LogHi-s.LogLo >= 2*experiment.Unbounded-1e-9 || math.Abs(s.LogLo) >= experiment.Unbounded-1e-9 ||
			math.Abs(s.LogHi) >= experiment.Unbounded-1e-9 {
			continue
		}
		first, second := cmp.B, cmp.A
		if v, ok := kept[cmp.Knob]; ok && v == cmp.A {
			first, second, s = cmp.A, cmp.B, reversed(s)
		}
		label := fmt.Sprintf("%s: %s against %s", cmp.Knob, knob.Shown(cmp.Knob, first), knob.Shown(cmp.Knob, second))
		tip := fmt.Sprintf("%s: %s %s (interval %s to %s), %s, %s", label, changeHTML(100*s.Estimate), metricLabel(cmp.Metric),
			changeHTML(100*s.Lo), changeHTML(100*s.Hi), verdictText(s.Verdict), pLabel(s))
		if v, ok := kept[cmp.Knob]; ok && v == first {
			tip += "; kept"
		}
		rows = append(rows, forestRow{Label: label, S: s, Tip: tip})
	}
	return forestChart("effects", "Each knob's effect", "change of the first value against the second (the kept value first)", rows)
}

// reversed is A against B from a comparison of B against A: the interval turned over, the verdict too.
func reversed(c stats.Comparison) stats.Comparison {
	inv := change{100 * c.Estimate, 100 * c.Lo, 100 * c.Hi}.inverse()
	c.Estimate, c.Lo, c.Hi = inv.Est/100, inv.Lo/100, inv.Hi/100
	c.LogEstimate, c.LogLo, c.LogHi = -c.LogEstimate, -c.LogHi, -c.LogLo
	c.Verdict = flip(c.Verdict)
	return c
}

// metricLabel names a tune metric in words.
func metricLabel(m string) string {
	switch m {
	case tune.MetricCPU:
		return "requests per CPU-second of php-fpm"
	case tune.MetricWork:
		return "work per request"
	case tune.MetricCapacity:
		return "requests per server CPU-second"
	}
	return "requests/s"
}

// pLabel is what a comparison rests on, in words: its rounds (or pairs), and that its interval holds with the
// run's others (the p-values and methods are result.json's and docs/engine.md's, not the report's).
func pLabel(c stats.Comparison) string {
	if c.Method == "confidence-sequence" {
		return fmt.Sprintf("%d rounds", c.N)
	}
	return fmt.Sprintf("%d pairs", c.N)
}

// forestRow is one estimate with its interval.
type forestRow struct {
	Label string
	S     stats.Comparison
	Tip   string
}

// forestChart draws estimates of relative change with their CIs around zero, one row each, by verdict.
func forestChart(id, title, axisTitle string, rows []forestRow) *chart {
	if len(rows) == 0 {
		return nil
	}
	labels := make([]string, len(rows))
	for i, r := range rows {
		labels[i] = r.Label
	}
	left, right := labelColumn(labels), 180.0
	c := &chart{ID: id, Title: title, W: chartW, H: padTop + 28*float64(len(rows)) + padBot}
	bottom := c.H - padBot
	lo, hi := 0.0, 0.0
	for _, r := range rows {
		lo, hi = math.Min(lo, 100*r.S.Lo), math.Max(hi, 100*r.S.Hi)
	}
	pad := math.Max((hi-lo)*0.05, 1)
	ticks := niceTicks(lo-pad, hi+pad, 6)
	xs := scale{D0: math.Min(ticks[0], lo-pad), D1: math.Max(ticks[len(ticks)-1], hi+pad), R0: left, R1: c.W - right}
	xAxis(c, xs, ticks, axisPct, padTop, bottom, axisTitle)
	c.line(xs.at(0), padTop-8, xs.at(0), bottom, "zero")
	for i, r := range rows {
		y := padTop + 28*float64(i) + 14
		c.text(left-10, y+4, short(r.Label, maxLabel), "end", "row-label")
		v := verdictClass(r.S.Verdict)
		c.line(xs.at(100*r.S.Lo), y, xs.at(100*r.S.Hi), y, "ci "+v)
		c.line(xs.at(100*r.S.Lo), y-5, xs.at(100*r.S.Lo), y+5, "ci "+v)
		c.line(xs.at(100*r.S.Hi), y-5, xs.at(100*r.S.Hi), y+5, "ci "+v)
		c.mark(el{Kind: "rect", X: xs.at(100*r.S.Estimate) - 5, Y: y - 5, W: 10, H: 10, Class: "est " + v, Title: r.Tip})
		c.text(c.W-right+10, y+4, fmt.Sprintf("%s  %s", signedPct(100*r.S.Estimate), strings.TrimSuffix(verdictText(r.S.Verdict), " shown")), "start", "row-value "+v)
	}
	c.Legend = []legendItem{{"est better", "better"}, {"est worse", "worse"}, {"est no_difference", "no difference shown"}, {"est inconclusive", "inconclusive"}}
	return c
}

func orUnset(v string) string {
	if v == "" {
		return "(unset)"
	}
	return v
}

// short cuts s to n characters with an ellipsis; the full text stays in the tooltips and tables.
func short(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func verdictClass(v stats.Verdict) string {
	switch v {
	case stats.Better, stats.Worse, stats.NoDifference, stats.Insufficient, stats.Inconclusive, stats.Error, tune.Screened, tune.NonInferior:
		return string(v)
	}
	return "none"
}

func verdictText(v stats.Verdict) string {
	switch v {
	case stats.Better:
		return "better"
	case stats.Worse:
		return "worse"
	case stats.NoDifference:
		return "no difference shown"
	case stats.Insufficient:
		return "too few trials"
	case stats.Inconclusive:
		return "inconclusive"
	case stats.Error:
		return "error"
	case tune.Screened:
		return "screened: counted, not timed"
	case tune.NonInferior:
		return "not worse than the best by more than the margin"
	}
	return "not decided"
}

// axisPct labels a tick of a change in percent: 0%, +50%, −12.5%.
func axisPct(v float64) string {
	if v == 0 {
		return "0%"
	}
	s := fnum(v) + "%"
	if v > 0 {
		return "+" + s
	}
	return "−" + s[1:]
}

// bytesTicks are round values in the binary unit that suits hi: 0, 0.5 MiB, 1 MiB...
func bytesTicks(hi float64) []float64 {
	unit := 1.0
	for _, u := range []float64{1 << 30, 1 << 20, 1 << 10} {
		if hi >= u {
			unit = u
			break
		}
	}
	t := niceTicks(0, hi/unit, 5)
	for i := range t {
		t[i] *= unit
	}
	return t
}
