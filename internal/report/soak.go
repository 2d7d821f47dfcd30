package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/phptune/phptune/internal/bytesize"
	"github.com/phptune/phptune/internal/tune"
)

// The soak: the workers' memory over a long series of requests, what it grows by a request, the pages that
// grow it, and the pm.max_requests that keeps a worker within what the pool was sized with.

// soakLines are the soak's sentences for the terminal, in order (none when there was no soak).
func soakLines(r *tune.Result) []string {
	sk := r.Soak
	if sk == nil {
		return nil
	}
	g := sk.Growth
	out := []string{fmt.Sprintf("A static pool of %d (never recycled) served %s requests of the mix in %s (%s req/s, %d connections).",
		sk.Workers, group(sk.Requests), secs(sk.Seconds), rate(sk.RPS), sk.Connections)}
	if !g.Known() {
		why := "no worker served enough requests to tell"
		if sk.Stopped != "" {
			why = sk.Stopped
		}
		return append(out, "Growth not measured: "+why+".")
	}
	verdict := "No growth shown:"
	if g.Shown {
		verdict = "A worker grows"
	}
	out = append(out, fmt.Sprintf("%s %s a request (95%% interval; %d worker%s read against %s requests of their own).",
		verdict, g, g.Workers, plural(g.Workers), group(g.Requests)))
	if sk.Stopped != "" {
		out = append(out, "The soak ended early: "+sk.Stopped+".")
	}
	urls := slices.Clone(sk.URLs)
	slices.SortStableFunc(urls, func(a, b tune.URLGrowth) int { return cmp.Compare(b.Growth.PerRequest, a.Growth.PerRequest) })
	var alone []string
	for _, u := range urls {
		alone = append(alone, fmt.Sprintf("%s %s", strings.TrimSpace(u.Method+" "+u.Path), u.Growth))
	}
	if len(alone) > 0 {
		out = append(out, "Alone on a worker of its own, a request: "+strings.Join(alone, "; ")+".")
	}
	for _, d := range sk.Day {
		if !g.Shown {
			break // no growth shown: nothing to project over a day (older results carry a day all the same)
		}
		out = append(out, fmt.Sprintf("A worker starts at %s; after a day at %s req/s (%s), never recycled, it would hold about %s "+
			"(at most %s).", bytesize.Format(float64(sk.StartBytes)), rate(d.Rate), dayFrom(d.From, len(sk.Day) == 1),
			bytesize.Format(float64(d.Bytes)), bytesize.Format(float64(d.MaxBytes))))
	}
	if g.Shown && sk.MaxRequests > 0 {
		s := fmt.Sprintf("pm.max_requests %d keeps a worker within %s", sk.MaxRequests, bytesize.Format(float64(max(sk.GrownBytes, sk.SizedBytes))))
		if sk.GrownBytes > sk.SizedBytes {
			s += fmt.Sprintf(", more than the %s the pool was sized with: its memory bound counts a worker at that", bytesize.Format(float64(sk.SizedBytes)))
		} else {
			s += ", the memory the pool was sized with"
		}
		out = append(out, s+".")
	}
	if sk.Note != "" {
		out = append(out, sk.Note+".")
	}
	return out
}

func dayFrom(from string, alone bool) string {
	switch {
	case from == "measured" && alone:
		return "the soak's own rate; tune has no access log's"
	case from == "measured":
		return "the soak's own rate"
	}
	return from
}

// soakChart is each worker's private memory against the requests it had served, with the memory the pool was
// sized with and what max_requests keeps a worker within.
func soakChart(sk *tune.Soak) *chart {
	if sk == nil || len(sk.Series) == 0 {
		return nil
	}
	c := &chart{ID: "soak", Title: "Memory of each worker against the requests it served", W: chartW, H: 340}
	left, bottom := 72.0, c.H-padBot
	var xhi, ylo, yhi float64
	ylo = math.Inf(1)
	for _, s := range sk.Series {
		for _, p := range s.Points {
			xhi = math.Max(xhi, float64(p.Requests))
			ylo, yhi = math.Min(ylo, float64(p.USS)), math.Max(yhi, float64(p.USS))
		}
	}
	if xhi == 0 {
		return nil
	}
	ref := float64(max(sk.GrownBytes, sk.SizedBytes))
	if ref > 0 && ref < 4*yhi {
		yhi = math.Max(yhi, ref)
	}
	yt := niceTicks(0, yhi*1.05/(1<<20), 6)
	ys := scale{D0: 0, D1: math.Max(yt[len(yt)-1], yhi*1.05/(1<<20)), R0: bottom, R1: padTop}
	xt := niceTicks(0, xhi, 6)
	xs := scale{D0: 0, D1: math.Max(xt[len(xt)-1], xhi), R0: left, R1: c.W - padRight}
	yAxis(c, ys, yt, func(v float64) string { return fnum(v) + " MiB" }, left, c.W-padRight, "private memory (USS)")
	xAxis(c, xs, xt, fnum, padTop, bottom, "requests the worker had served")
	if ref > 0 && ref/(1<<20) <= ys.D1 {
		y := ys.at(ref / (1 << 20))
		c.line(left, y, c.W-padRight, y, "budget")
		label := "the pool was sized with " + bytesLabel(float64(sk.SizedBytes))
		if sk.GrownBytes > sk.SizedBytes {
			label = fmt.Sprintf("a worker at max_requests %d: %s", sk.MaxRequests, bytesLabel(float64(sk.GrownBytes)))
		}
		c.text(c.W-padRight-4, y-4, label, "end", "budget-label")
	}
	if n := float64(sk.MaxRequests); n > 0 && n <= xs.D1 {
		x := xs.at(n)
		c.line(x, padTop, x, bottom, "knee")
		c.text(x+4, padTop+12, fmt.Sprintf("max_requests %d", sk.MaxRequests), "start", "knee-label")
		// A fresh worker at the growth's upper end, up to where it is recycled.
		c.line(xs.at(0), ys.at(float64(sk.StartBytes)/(1<<20)), x, ys.at(float64(sk.GrownBytes)/(1<<20)), "counted")
	}
	for _, s := range sk.Series {
		var d strings.Builder
		for i, p := range s.Points {
			x, y := xs.at(float64(p.Requests)), ys.at(float64(p.USS)/(1<<20))
			fmt.Fprintf(&d, "%s%.1f %.1f", map[bool]string{true: "M", false: " L"}[i == 0], x, y)
		}
		c.add(el{Kind: "path", D: d.String(), Class: "curve"})
		for _, p := range s.Points {
			c.mark(el{Kind: "circle", X: xs.at(float64(p.Requests)), Y: ys.at(float64(p.USS) / (1 << 20)), R: 2.5, Class: "point",
				Title: fmt.Sprintf("worker %d after %s requests: %s", s.PID, group(p.Requests), bytesLabel(float64(p.USS)))})
		}
	}
	c.Legend = []legendItem{{"point", "a worker's read between requests, joined by worker"}}
	if ref > 0 {
		c.Legend = append(c.Legend, legendItem{"budget", "what a worker may hold"})
	}
	if sk.MaxRequests > 0 && float64(sk.MaxRequests) <= xs.D1 {
		c.Legend = append(c.Legend, legendItem{"knee", "where max_requests recycles it"},
			legendItem{"counted", "a fresh worker, growing at the interval's upper end"})
	}
	return c
}

// soakCaption says what the soak chart shows and what it found.
func soakCaption(sk *tune.Soak) string {
	s := fmt.Sprintf("The soak's static pool of %d workers, never recycled, served the mix at %d connections; each line is one "+
		"worker, read between its requests, its first %d left out. ", sk.Workers, sk.Connections, tune.SoakWarm)
	if g := sk.Growth; g.Known() {
		s += fmt.Sprintf("Growth per request %s (95%% interval)", g.String())
		if !g.Shown {
			s += ": no growth shown"
		}
		s += ". "
	}
	if leaks := tune.LeakNames(sk.URLs); leaks != "" {
		s += "Sent alone to a worker of its own, " + leaks + "."
	}
	return strings.TrimSpace(s)
}
