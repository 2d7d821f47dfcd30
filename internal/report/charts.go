package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/phptune/phptune/internal/experiment"
	"github.com/phptune/phptune/internal/stats"
	"github.com/phptune/phptune/internal/tune"
)

// saturationChart is throughput against concurrency: each point's mean with its 95% CI, the knee and the peak.
func saturationChart(s *tune.Saturation) *chart {
	if s == nil || len(s.Points) == 0 {
		return nil
	}
	c := &chart{ID: "saturation", Title: "Throughput against concurrency", W: chartW, H: 340}
	left, bottom := 64.0, c.H-padBot
	lo, hi := float64(s.Points[0].Concurrency), float64(s.Points[0].Concurrency)
	top := 0.0
	for _, p := range s.Points {
		lo, hi = math.Min(lo, float64(p.Concurrency)), math.Max(hi, float64(p.Concurrency))
		top = math.Max(top, math.Max(p.Hi, p.RPS))
	}
	xs := scale{D0: math.Max(lo/1.5, 0.5), D1: hi * 1.5, R0: left, R1: c.W - padRight, Log: true}
	yt := niceTicks(0, top*1.05, 6)
	ys := scale{D0: 0, D1: math.Max(yt[len(yt)-1], top*1.05), R0: bottom, R1: padTop}
	var xt []float64
	for _, p := range s.Points {
		xt = append(xt, float64(p.Concurrency))
	}
	yAxis(c, ys, yt, fnum, left, c.W-padRight, "requests/s")
	xAxis(c, xs, xt, func(v float64) string { return fmt.Sprint(int(v)) }, padTop, bottom, "concurrent connections")
	if s.Knee > 0 {
		x := xs.at(float64(s.Knee))
		c.line(x, padTop, x, bottom, "knee")
		c.text(x+4, padTop+12, fmt.Sprintf("knee: %d", s.Knee), "start", "knee-label")
	}
	var d strings.Builder
	for i, p := range s.Points {
		x, y := xs.at(float64(p.Concurrency)), ys.at(p.RPS)
		if i == 0 {
			fmt.Fprintf(&d, "M%.1f %.1f", x, y)
		} else {
			fmt.Fprintf(&d, " L%.1f %.1f", x, y)
		}
	}
	c.add(el{Kind: "path", D: d.String(), Class: "curve"})
	for _, p := range s.Points {
		x := xs.at(float64(p.Concurrency))
		if p.Hi > p.Lo {
			y0, y1 := ys.at(math.Max(p.Lo, 0)), ys.at(p.Hi)
			c.line(x, y0, x, y1, "ci")
			c.line(x-5, y0, x+5, y0, "ci")
			c.line(x-5, y1, x+5, y1, "ci")
		}
		class := "point"
		if p.Concurrency == s.Peak {
			class += " peak"
		}
		tip := fmt.Sprintf("%d connections: %s req/s (95%% CI %s to %s), p99 %s", p.Concurrency, fnum(p.RPS), fnum(p.Lo), fnum(p.Hi), msLabel(p.P99Us))
		if p.Errors > 0 {
			tip += fmt.Sprintf(", %d errors", p.Errors)
		}
		c.mark(el{Kind: "circle", X: x, Y: ys.at(p.RPS), R: 5, Class: class, Title: tip})
	}
	c.Legend = []legendItem{{"point", "mean of the trials"}, {"ci", "95% CI"}}
	if s.Peak > 0 {
		c.Legend = append(c.Legend, legendItem{"point peak", "peak"})
	}
	if s.Knee > 0 {
		c.Legend = append(c.Legend, legendItem{"knee", "knee"})
	}
	return c
}

// variant is one configuration measured, with the medians of its trials.
type variant struct {
	Name, Config                 string
	Sweep                        bool // the saturation sweep's large pool
	Trials                       int
	Requests, Errors             int64
	RPS, P50, P90, P99, P999     float64
	FPMCPU, NginxCPU             float64 // µs a request
	PeakUSS, MeanPSS, SharedSeen int64
}

// latencyChart shows, per variant, the medians over its trials of p50, p90, p99 and p99.9 on a log scale.
func latencyChart(vs []variant) *chart {
	var rows []variant
	for _, v := range vs {
		if !v.Sweep && v.P50 > 0 {
			rows = append(rows, v)
		}
	}
	if len(rows) == 0 {
		return nil
	}
	left := 210.0
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
	xAxis(c, xs, logTicks(xs.D0, xs.D1), msLabel, padTop, bottom, "latency (log scale), median over each configuration's trials")
	for i, v := range rows {
		y := padTop + 30*float64(i) + 15
		c.text(left-10, y+4, short(v.Name, 30), "end", "row-label")
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
				Title: fmt.Sprintf("%s: %s %s (median of %d trials)", v.Name, p.name, msLabel(p.v), v.Trials)})
		}
	}
	c.Legend = []legendItem{{"p50", "p50"}, {"p90", "p90"}, {"p99", "p99"}, {"p999", "p99.9"}}
	return c
}

// memoryChart shows each configuration's peak private memory per worker against what the budget allows a
// worker at the chosen pool size (a log scale when the budget is far above the workers' needs).
func memoryChart(vs []variant, ps *tune.PoolSize) *chart {
	var rows []variant
	for _, v := range vs {
		if v.PeakUSS > 0 {
			rows = append(rows, v)
		}
	}
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
	left := 210.0
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
		c.text(left-10, y+14, short(v.Name, 30), "end", "row-label")
		w := xs.at(float64(v.PeakUSS)) - base
		tip := fmt.Sprintf("%s: peak USS %s per worker", v.Name, bytesLabel(float64(v.PeakUSS)))
		if v.MeanPSS > 0 {
			tip += fmt.Sprintf(", mean PSS %s", bytesLabel(float64(v.MeanPSS)))
		}
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

// effectsChart is a forest plot: each comparison's effect with its CI, coloured by verdict.
func effectsChart(cs []tune.Comparison) *chart {
	var rows []forestRow
	for _, r := range cs {
		// An interval that is still unbounded (too few rounds for its level) says nothing a chart can show.
		if r.Stats.N < 2 || r.Stats.LogHi-r.Stats.LogLo >= 2*experiment.Unbounded-1e-9 || math.Abs(r.Stats.LogLo) >= experiment.Unbounded-1e-9 ||
			math.Abs(r.Stats.LogHi) >= experiment.Unbounded-1e-9 {
			continue
		}
		label := fmt.Sprintf("%s=%s vs %s", r.Knob, orUnset(r.B), orUnset(r.A))
		tip := fmt.Sprintf("%s: %s %s (CI %s to %s), %s, %s", label, signedPct(100*r.Stats.Estimate), metricLabel(r.Metric),
			signedPct(100*r.Stats.Lo), signedPct(100*r.Stats.Hi), verdictText(r.Stats.Verdict), pLabel(r.Stats))
		if r.Accepted {
			tip += "; accepted"
		}
		rows = append(rows, forestRow{Label: label, S: r.Stats, Tip: tip})
	}
	return forestChart("effects", "Each knob's effect", "change, candidate against the best so far (CI at the run's error budget)", rows)
}

// metricLabel names a tune metric in words.
func metricLabel(m string) string {
	switch m {
	case tune.MetricCPU:
		return "requests per CPU-second"
	case tune.MetricWork:
		return "work per request"
	}
	return "requests/s"
}

// pLabel is a comparison's p-value as its method states it, with the rounds it rests on.
func pLabel(c stats.Comparison) string {
	if c.Method == "confidence-sequence" {
		return fmt.Sprintf("anytime p %.3g (%.3g against the run's budget), %d rounds", c.P, c.PAdjusted, c.N)
	}
	return fmt.Sprintf("p %.3g (Holm %.3g), %d pairs", c.P, c.PAdjusted, c.N)
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
	// The label column fits the longest label (at most 8 px a character at 12.5 px), within limits that leave
	// the plot room.
	const maxLabel = 39 // 24+8*39 = 336 px, within the cap
	longest := 0
	for _, r := range rows {
		longest = max(longest, min(len([]rune(r.Label)), maxLabel))
	}
	left, right := min(max(24+8*float64(longest), 150), 340), 180.0
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
	case stats.Better, stats.Worse, stats.NoDifference, stats.Insufficient, stats.Inconclusive, stats.Error:
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
