package report

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/phptune/phptune/internal/load"
)

// benchQuantiles are the percentiles the latency distribution is drawn at; a level is drawn only when the
// sample resolves it (at least one request above it).
var benchQuantiles = []float64{0, 10, 20, 30, 40, 50, 60, 70, 75, 80, 85, 90, 95, 97, 99, 99.5, 99.9, 99.95, 99.99, 99.995, 99.999}

// BenchQuantilesResolved is how many of the drawn percentile levels n requests resolve.
func benchQuantilesResolved(n int64) []float64 {
	var out []float64
	for _, q := range benchQuantiles {
		if (100-q)/100*float64(n) >= 1 {
			out = append(out, q)
		}
	}
	return out
}

type benchPage struct {
	R      *load.Result
	Title  string
	Charts []*chart
	Codes  [][2]string
	Errors [][3]string
}

// BenchHTML writes a page for a bench result: the latency distribution (from the merged histogram when the
// result carries it), each trial's throughput, and the figures of the terminal summary.
func BenchHTML(w io.Writer, r *load.Result) error {
	p := benchPage{R: r, Title: "phptune bench: " + r.Target}
	if c := latencyDistChart(r); c != nil {
		p.Charts = append(p.Charts, c)
	}
	if c := trialsChart(r); c != nil {
		p.Charts = append(p.Charts, c)
	}
	var codes []string
	for k := range r.StatusCodes {
		codes = append(codes, k)
	}
	sort.Strings(codes)
	for _, k := range codes {
		p.Codes = append(p.Codes, [2]string{k, group(r.StatusCodes[k])})
	}
	var classes []string
	for k := range r.ErrorsByClass {
		classes = append(classes, k)
	}
	sort.Slice(classes, func(i, j int) bool { return r.ErrorsByClass[classes[i]] > r.ErrorsByClass[classes[j]] })
	for _, k := range classes {
		p.Errors = append(p.Errors, [3]string{k, group(r.ErrorsByClass[k]), r.ErrorSamples[k]})
	}
	var buf bytes.Buffer
	if err := pageTmpl.ExecuteTemplate(&buf, "bench.tmpl", p); err != nil {
		return fmt.Errorf("render report: %w", err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// latencyDistChart is latency against percentile on a "nines" axis (90, 99, 99.9...), log latency.
func latencyDistChart(r *load.Result) *chart {
	type pt struct{ q, v float64 }
	var pts []pt
	h := r.Histogram()
	source := "the merged HDR histogram"
	if h != nil && h.TotalCount() > 0 {
		for _, q := range benchQuantilesResolved(h.TotalCount()) {
			if v := float64(h.ValueAtQuantile(q)); v > 0 {
				pts = append(pts, pt{q, v})
			}
		}
	} else {
		source = "the summary percentiles (the result carries no histogram)"
		for _, x := range []pt{{50, r.Latency.P50}, {90, r.Latency.P90}, {99, r.Latency.P99}, {99.9, r.Latency.P999}} {
			if x.v > 0 {
				pts = append(pts, x)
			}
		}
	}
	if len(pts) == 0 {
		return nil
	}
	nines := func(q float64) float64 { return -math.Log10(1 - q/100) }
	c := &chart{ID: "latency-distribution", Title: "Latency by percentile", W: chartW, H: 340}
	left, bottom := 70.0, c.H-padBot
	lo, hi := pts[0].v, pts[0].v
	for _, p := range pts {
		lo, hi = math.Min(lo, p.v), math.Max(hi, p.v)
	}
	maxN := math.Max(nines(pts[len(pts)-1].q), 1)
	xs := scale{D0: 0, D1: math.Ceil(maxN - 1e-6), R0: left, R1: c.W - padRight}
	ys := scale{D0: lo / 1.3, D1: hi * 1.3, R0: bottom, R1: padTop, Log: true}
	var xt []float64
	for n := 0.0; n <= xs.D1; n++ {
		xt = append(xt, n)
	}
	xAxis(c, xs, xt, ninesLabel, padTop, bottom, "percentile")
	yAxis(c, ys, logTicks(ys.D0, ys.D1), msLabel, left, c.W-padRight, "latency (log scale)")
	var d bytes.Buffer
	for i, p := range pts {
		cmd := "L"
		if i == 0 {
			cmd = "M"
		}
		fmt.Fprintf(&d, "%s%.1f %.1f ", cmd, xs.at(nines(p.q)), ys.at(p.v))
	}
	c.add(el{Kind: "path", D: d.String(), Class: "curve"})
	for _, p := range pts {
		c.mark(el{Kind: "circle", X: xs.at(nines(p.q)), Y: ys.at(p.v), R: 4, Class: "point", Title: fmt.Sprintf("p%s: %s", fnum(p.q), msLabel(p.v))})
	}
	c.Caption = "From " + source + "; percentiles shown only where the sample has requests beyond them."
	if r.LatencyCorrected {
		c.Caption += " Open model: latency counts from each request's due time (coordinated omission corrected)."
	}
	return c
}

// trialsChart is each trial's requests/s.
func trialsChart(r *load.Result) *chart {
	if len(r.Trials) < 2 {
		return nil
	}
	c := &chart{ID: "trials", Title: "Requests/s per trial", W: chartW, H: 300}
	left, bottom := 70.0, c.H-padBot
	top := 0.0
	for _, t := range r.Trials {
		top = math.Max(top, t.RPS)
	}
	yt := niceTicks(0, top*1.1, 5)
	ys := scale{D0: 0, D1: math.Max(yt[len(yt)-1], top*1.1), R0: bottom, R1: padTop}
	n := float64(len(r.Trials))
	slot := (c.W - padRight - left) / n
	yAxis(c, ys, yt, fnum, left, c.W-padRight, "requests/s")
	c.line(left, bottom, c.W-padRight, bottom, "axis")
	for i, t := range r.Trials {
		x := left + slot*float64(i)
		y := ys.at(t.RPS)
		c.mark(el{Kind: "rect", X: x + slot*0.2, Y: y, W: slot * 0.6, H: math.Max(bottom-y, 1), Class: "bar",
			Title: fmt.Sprintf("trial %d: %s req/s, p99 %s, %d errors", t.Index, fnum(t.RPS), msLabel(t.Latency.P99), t.Errors)})
		c.text(x+slot/2, bottom+16, fmt.Sprint(t.Index), "middle", "tick")
	}
	c.text((left+c.W-padRight)/2, bottom+36, "trial", "middle", "axis-title")
	c.Caption = "Each trial has its own warm-up; the percentiles above come from the trials' merged histogram, never from averaging per-trial percentiles."
	return c
}

// ninesLabel names a point of the nines axis: 0 is 0%, 1 is 90%, 2 is 99%, 3 is 99.9%...
func ninesLabel(n float64) string {
	k := int(math.Round(n))
	switch k {
	case 0:
		return "0%"
	case 1:
		return "90%"
	}
	return strings.TrimSuffix("99."+strings.Repeat("9", k-2), ".") + "%"
}
