package report

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/phptune/phptune/internal/check"
)

type checkPage struct {
	R     *check.Result
	Title string
	Pools []checkPoolView
}

type checkPoolView struct {
	P      *check.Pool
	ID     string
	Where  string
	Hero   []heroCard
	Charts []*chart
	Rows   [][2]string
}

// CheckHTML writes a page for a check result: per pool its problems with their evidence, the suggestions
// with the tune command that would verify each, busy workers over time against max_children, the pool's
// memory against what it has, and the figures of the terminal summary.
func CheckHTML(w io.Writer, r *check.Result) error {
	p := checkPage{R: r, Title: "phptune check"}
	var names []string
	for i, pool := range r.Pools {
		names = append(names, pool.Name)
		v := checkPoolView{P: pool, ID: fmt.Sprint(i), Where: pool.Address}
		if pool.Network == "tcp" {
			v.Where = "tcp:" + pool.Address
		}
		v.Hero = checkHero(pool)
		for _, c := range []*chart{busyChart(pool, i), poolMemoryChart(pool, i)} {
			if c != nil {
				v.Charts = append(v.Charts, c)
			}
		}
		v.Rows = checkFigureRows(pool)
		p.Pools = append(p.Pools, v)
	}
	if len(names) > 0 {
		p.Title += ": " + strings.Join(names, ", ")
	}
	var buf bytes.Buffer
	if err := pageTmpl.ExecuteTemplate(&buf, "check.tmpl", p); err != nil {
		return fmt.Errorf("render report: %w", err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

func checkHero(p *check.Pool) []heroCard {
	problems := heroCard{Big: fmt.Sprint(len(p.Findings)), Label: "problems found", Main: true, Verdict: "better"}
	if len(p.Findings) > 0 {
		problems.Verdict = "worse"
		var ids []string
		for _, f := range p.Findings {
			ids = append(ids, f.ID)
		}
		problems.Sub = strings.Join(ids, ", ")
	} else {
		problems.Sub = "nothing found over " + secs(p.ElapsedS)
	}
	mc := "?"
	if p.Busy.MaxChildren > 0 {
		mc = fmt.Sprint(p.Busy.MaxChildren)
	}
	busy := heroCard{Big: fmt.Sprintf("%d / %s", p.Busy.Peak, mc), Label: "busy workers at the peak, of max_children",
		Sub: fmt.Sprintf("p95 %s, mean %s; queue peak %d of %d", fnum(p.Busy.P95), fnum(p.Busy.Mean), p.Queue.Peak, p.Queue.Backlog)}
	cards := []heroCard{problems, busy}
	if m := p.Memory; m.AtMaxChildren > 0 && m.Budget > 0 {
		c := heroCard{Big: bytesLabel(float64(m.AtMaxChildren)), Label: "memory at max_children",
			Sub: fmt.Sprintf("of %s it has (room for %d workers); %s now", bytesLabel(float64(m.Budget)), m.Fits, bytesLabel(float64(m.Now)))}
		if m.AtMaxChildren > m.Budget {
			c.Verdict = "worse"
		}
		cards = append(cards, c)
	}
	return cards
}

// checkFigureRows are check's figures, one row a measure.
func checkFigureRows(p *check.Pool) [][2]string {
	t, q, m := p.Traffic, p.Queue, p.Memory
	rows := [][2]string{
		{"settings", fmt.Sprintf("pm %s, max_children %d, max_requests %d, request_slowlog_timeout %s", p.Settings.PM, p.Settings.MaxChildren,
			p.Settings.MaxRequests, secs(p.Settings.SlowlogTimeoutS))},
		{"requests", fmt.Sprintf("%s in %s, %s/s; max_children reached %d time(s); %d slow", group(t.Accepted), secs(p.ElapsedS), rate(t.PerSecond),
			t.MaxChildrenReached, t.SlowRequests)},
		{"waiting", fmt.Sprintf("queue peak %d of backlog %d (%s), waiting in %.0f%% of samples; a request waited p50 %s ms, p95 %s ms, max %s ms",
			q.Peak, q.Backlog, q.Source, 100*q.NonZero, fnum(q.StatusWaitP50), fnum(q.StatusWaitP95), fnum(q.StatusWaitMax))},
		{"worker memory", fmt.Sprintf("%s private at most, %s mean, %s shared; PHP's peak for a request %s", bytesLabel(float64(m.MaxUSS)),
			bytesLabel(float64(m.MeanUSS)), bytesLabel(float64(m.Shared)), bytesLabel(float64(m.PeakRequest)))},
		{"pool memory", fmt.Sprintf("%s now, %s at the peak, %s at max_children; %s", bytesLabel(float64(m.Now)), bytesLabel(float64(m.Peak)),
			bytesLabel(float64(m.AtMaxChildren)), m.LimitSource)},
	}
	if g := p.Growth; g != nil {
		rows = append(rows, [2]string{"growth", fmt.Sprintf("%s a request (at least %s), %s and %s in the window's halves, %d of %d workers growing",
			bytesLabel(g.PerRequest), bytesLabel(g.Lower), bytesLabel(g.FirstHalf), bytesLabel(g.SecondHalf), g.Growing, g.Workers)})
	}
	if c := p.CPU; c != nil && c.Of > 0 {
		rows = append(rows, [2]string{"CPU", fmt.Sprintf("%s of %d CPUs", fnum(c.Cores), c.Of)})
	}
	if o := p.Opcache.Last; o != nil && o.Enabled {
		rows = append(rows, [2]string{"opcache", fmt.Sprintf("%s used, %s wasted, %s free; %d of %d keys; %s of %s interned strings; hit rate %s%% since start",
			bytesLabel(float64(o.MemoryUsed)), bytesLabel(float64(o.MemoryWasted)), bytesLabel(float64(o.MemoryFree)), o.CachedKeys, o.MaxCachedKeys,
			bytesLabel(float64(o.InternedUsed)), bytesLabel(float64(o.InternedBuffer)), fnum(o.HitRate))})
	}
	return rows
}

// busyChart is busy workers over time against max_children, with the connections waiting in the queue.
func busyChart(p *check.Pool, i int) *chart {
	s := p.Series
	if len(s.T) == 0 {
		return nil
	}
	c := &chart{ID: fmt.Sprintf("busy-%d", i), Title: "Busy workers over time", W: chartW, H: 300}
	left, bottom := 56.0, c.H-padBot
	top := float64(max(p.Busy.MaxChildren, p.Busy.Peak, 1))
	for _, v := range s.Queue {
		top = math.Max(top, float64(v))
	}
	end := math.Max(p.ElapsedS, s.T[len(s.T)-1])
	xs := scale{D0: 0, D1: math.Max(end, 1), R0: left, R1: c.W - padRight}
	yt := niceTicks(0, top*1.1, 5)
	ys := scale{D0: 0, D1: math.Max(yt[len(yt)-1], top*1.1), R0: bottom, R1: padTop}
	yAxis(c, ys, yt, fnum, left, c.W-padRight, "workers, connections")
	xAxis(c, xs, niceTicks(0, xs.D1, 8), func(v float64) string { return secs(v) }, padTop, bottom, "time into the check")
	if mc := p.Busy.MaxChildren; mc > 0 {
		y := ys.at(float64(mc))
		c.line(left, y, c.W-padRight, y, "budget")
		c.text(c.W-padRight-4, y-6, fmt.Sprintf("max_children %d", mc), "end", "budget-label")
	}
	if len(s.QT) > 0 {
		c.add(el{Kind: "path", D: stepPath(xs, ys, s.QT, ints(s.Queue)), Class: "queue"})
	}
	c.add(el{Kind: "path", D: stepPath(xs, ys, s.T, ints(s.Busy)), Class: "curve"})
	for k, t := range s.T {
		c.mark(el{Kind: "circle", X: xs.at(t), Y: ys.at(float64(s.Busy[k])), R: 2.5, Class: "point",
			Title: fmt.Sprintf("%s: %d busy of %d workers", secs(t), s.Busy[k], s.Workers[k])})
	}
	c.Legend = []legendItem{{"point", "busy workers (status page)"}, {"queue", "connections waiting (accept queue)"}}
	if p.Busy.MaxChildren > 0 {
		c.Legend = append(c.Legend, legendItem{"budget", "pm.max_children"})
	}
	c.Caption = fmt.Sprintf("Workers not idle at each status read (check's own request left out), against pm.max_children; connections waiting "+
		"for a worker in the socket's accept queue (%s). Busy at max_children with connections waiting is a pool too small for its traffic.", p.Queue.Source)
	return c
}

// poolMemoryChart is the pool's memory over time against what it has, and what it may take at max_children.
func poolMemoryChart(p *check.Pool, i int) *chart {
	s, m := p.Series, p.Memory
	if len(s.T) == 0 || len(s.Memory) == 0 {
		return nil
	}
	c := &chart{ID: fmt.Sprintf("memory-%d", i), Title: "The pool's memory against what it has", W: chartW, H: 300}
	left, bottom := 72.0, c.H-padBot
	top := math.Max(float64(m.Budget), float64(m.AtMaxChildren))
	for _, v := range s.Memory {
		top = math.Max(top, float64(v))
	}
	end := math.Max(p.ElapsedS, s.T[len(s.T)-1])
	xs := scale{D0: 0, D1: math.Max(end, 1), R0: left, R1: c.W - padRight}
	unit := float64(1 << 20) // round ticks in the unit the labels use
	if top >= 2<<30 {
		unit = 1 << 30
	}
	yt := niceTicks(0, top*1.1/unit, 5)
	for k := range yt {
		yt[k] *= unit
	}
	ys := scale{D0: 0, D1: math.Max(yt[len(yt)-1], top*1.1), R0: bottom, R1: padTop}
	yAxis(c, ys, yt, bytesLabel, left, c.W-padRight, "memory")
	xAxis(c, xs, niceTicks(0, xs.D1, 8), func(v float64) string { return secs(v) }, padTop, bottom, "time into the check")
	if m.Budget > 0 {
		y := ys.at(float64(m.Budget))
		c.line(left, y, c.W-padRight, y, "budget")
		c.text(c.W-padRight-4, y-6, "what it has: "+bytesLabel(float64(m.Budget)), "end", "budget-label")
	}
	if m.AtMaxChildren > 0 {
		y := ys.at(float64(m.AtMaxChildren))
		c.line(left, y, c.W-padRight, y, "counted")
		c.text(left+6, y-6, fmt.Sprintf("at max_children %d: %s", p.Settings.MaxChildren, bytesLabel(float64(m.AtMaxChildren))), "start", "counted-label")
	}
	vals := make([]float64, len(s.Memory))
	for k, v := range s.Memory {
		vals[k] = float64(v)
	}
	mt := s.MT
	if len(mt) != len(s.Memory) {
		mt = s.T // a result of before memory_t: memory at every sample
	}
	c.add(el{Kind: "path", D: stepPath(xs, ys, mt, vals), Class: "curve"})
	workers := map[float64]int{} // memory is read at some status samples: their workers, by time
	for k, t := range s.T {
		if k < len(s.Workers) {
			workers[t] = s.Workers[k]
		}
	}
	for k, t := range mt {
		c.mark(el{Kind: "circle", X: xs.at(t), Y: ys.at(vals[k]), R: 2.5, Class: "point",
			Title: fmt.Sprintf("%s: %s (%d workers)", secs(t), bytesLabel(vals[k]), workers[t])})
	}
	c.Legend = []legendItem{{"point", "the pool now: master + shared once + each worker's private memory"}}
	if m.Budget > 0 {
		c.Legend = append(c.Legend, legendItem{"budget", "what it has"})
	}
	if m.AtMaxChildren > 0 {
		c.Legend = append(c.Legend, legendItem{"counted", "at max_children"})
	}
	c.Caption = fmt.Sprintf("What it has: %s. At max_children a worker is counted at %s (the larger of its private memory and PHP's own peak for a request).",
		m.LimitSource, bytesLabel(float64(m.PerWorker)))
	return c
}

// stepPath draws values held from one sample to the next.
func stepPath(xs, ys scale, t, v []float64) string {
	var d strings.Builder
	for k := range t {
		x, y := xs.at(t[k]), ys.at(v[k])
		if k == 0 {
			fmt.Fprintf(&d, "M%.1f %.1f", x, y)
			continue
		}
		fmt.Fprintf(&d, " H%.1f V%.1f", x, y)
	}
	return d.String()
}

func ints(v []int) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}
