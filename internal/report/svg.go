package report

import (
	"fmt"
	"math"
	"strconv"
)

// chart is an inline SVG drawn from Go: geometry here, markup (and all escaping) in the html/template. Elements
// whose class includes "mark" are the data marks, one per plotted figure; Marks counts them so that a test can
// check the page shows what the result holds.
type chart struct {
	ID, Title string
	Caption   string
	W, H      float64
	Els       []el
	Marks     int
	Legend    []legendItem
}

type legendItem struct{ Class, Label string }

// el is one SVG element: Kind is rect, circle, line, path or text.
type el struct {
	Kind                string
	X, Y, W, H, R       float64
	X2, Y2              float64
	D                   string
	Class, Text, Anchor string
	Title               string // a tooltip (SVG <title>)
}

func (c *chart) add(e el) { c.Els = append(c.Els, e) }

func (c *chart) mark(e el) {
	e.Class = "mark " + e.Class
	c.Els = append(c.Els, e)
	c.Marks++
}

func (c *chart) line(x1, y1, x2, y2 float64, class string) {
	c.add(el{Kind: "line", X: x1, Y: y1, X2: x2, Y2: y2, Class: class})
}

func (c *chart) text(x, y float64, s, anchor, class string) {
	c.add(el{Kind: "text", X: x, Y: y, Text: s, Anchor: anchor, Class: class})
}

// scale maps a domain [D0, D1] onto a range [R0, R1], linearly or logarithmically.
type scale struct {
	D0, D1, R0, R1 float64
	Log            bool
}

func (s scale) at(v float64) float64 {
	d0, d1 := s.D0, s.D1
	if s.Log {
		v, d0, d1 = math.Log(math.Max(v, 1e-12)), math.Log(d0), math.Log(d1)
	}
	if d1 == d0 {
		return (s.R0 + s.R1) / 2
	}
	return s.R0 + (v-d0)/(d1-d0)*(s.R1-s.R0)
}

// niceTicks are about n round values (1, 2 or 5 times a power of ten) covering [lo, hi].
func niceTicks(lo, hi float64, n int) []float64 {
	if !(hi > lo) {
		return []float64{lo}
	}
	raw := (hi - lo) / float64(max(n, 1))
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	step := p
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			step = m * p
			break
		}
	}
	var t []float64
	for v := math.Ceil(lo/step) * step; v <= hi+step*1e-9; v += step {
		t = append(t, math.Round(v/step)*step)
	}
	return t
}

// logTicks are 1, 2, 5 times powers of ten within [lo, hi], thinned to 1 and 10 when there are many decades.
func logTicks(lo, hi float64) []float64 {
	var t []float64
	mults := []float64{1, 2, 5}
	if hi/lo > 1e4 {
		mults = []float64{1}
	}
	for p := math.Pow(10, math.Floor(math.Log10(lo))); p <= hi; p *= 10 {
		for _, m := range mults {
			if v := m * p; v >= lo && v <= hi {
				t = append(t, v)
			}
		}
	}
	return t
}

// pow2Ticks are powers of two within [lo, hi] (bytes read best in binary units), at most about eight.
func pow2Ticks(lo, hi float64) []float64 {
	a, b := math.Ceil(math.Log2(lo)), math.Floor(math.Log2(hi))
	step := math.Max(1, math.Ceil((b-a+1)/8))
	var t []float64
	for e := a; e <= b; e += step {
		t = append(t, math.Exp2(e))
	}
	return t
}

// Plot area margins, in SVG units.
const (
	chartW   = 760.0
	padTop   = 28.0
	padRight = 24.0
	padBot   = 44.0
)

// xAxis draws vertical grid lines with labels under the plot; yAxis horizontal ones with labels on the left.
func xAxis(c *chart, s scale, ticks []float64, label func(float64) string, top, bottom float64, title string) {
	for _, v := range ticks {
		x := s.at(v)
		c.line(x, top, x, bottom, "grid")
		c.text(x, bottom+16, label(v), "middle", "tick")
	}
	c.line(s.R0, bottom, s.R1, bottom, "axis")
	if title != "" {
		c.text((s.R0+s.R1)/2, bottom+36, title, "middle", "axis-title")
	}
}

func yAxis(c *chart, s scale, ticks []float64, label func(float64) string, left, right float64, title string) {
	for _, v := range ticks {
		y := s.at(v)
		c.line(left, y, right, y, "grid")
		c.text(left-6, y+4, label(v), "end", "tick")
	}
	c.line(left, s.R0, left, s.R1, "axis")
	if title != "" {
		c.text(left, padTop-12, title, "start", "axis-title")
	}
}

// fnum formats a figure with about three significant digits.
func fnum(v float64) string {
	a := math.Abs(v)
	if a >= 1 && a < 1e15 && v == math.Trunc(v) {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	switch {
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case a == 0:
		return "0"
	}
	return strconv.FormatFloat(v, 'g', 2, 64)
}

// msLabel formats a latency given in microseconds.
func msLabel(usv float64) string {
	switch {
	case usv >= 1e6:
		return fnum(usv/1e6) + "s"
	case usv >= 1e3:
		return fnum(usv/1e3) + "ms"
	}
	return fnum(usv) + "µs"
}

// bytesLabel formats bytes in binary units.
func bytesLabel(b float64) string {
	switch {
	case b >= 1<<30:
		return fnum(b/(1<<30)) + " GiB"
	case b >= 1<<20:
		return fnum(b/(1<<20)) + " MiB"
	case b >= 1<<10:
		return fnum(b/(1<<10)) + " KiB"
	}
	return fnum(b) + " B"
}

// signedPct formats a relative change given in percent, with a true minus sign.
func signedPct(p float64) string {
	s := fmt.Sprintf("%+.1f%%", p)
	if s[0] == '-' {
		s = "−" + s[1:]
	}
	return s
}
