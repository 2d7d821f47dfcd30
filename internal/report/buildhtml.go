package report

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/phptune/phptune/internal/phpbuild"
	"github.com/phptune/phptune/internal/stats"
)

// buildPage is what the build template renders: the result and what is derived from it for the page.
type buildPage struct {
	R           *phpbuild.Result
	Title       string
	Lede        []string
	Cards       []heroCard
	Charts      []*chart
	Times       []timeRow
	Throughput  []throughputRow
	IPR         []iprRow
	IPRCaveat   string
	Unavailable []unavailableRow
	Builds      []buildRow
	Env         [][2]string
	// Level says once, in words, at what confidence the build's verdicts hold together.
	Level string
}

// timeRow is one variant's time per request on one set, with its gain against the baseline.
type timeRow struct {
	Variant, Set, Time, Gain, CI string
	Verdict                      stats.Verdict
	Reference                    bool
}

type throughputRow struct {
	Variant, RPS, BaselineRPS, Gain, CI string
	Trials                              int
	Verdict                             stats.Verdict
}

// iprRow is one variant's instructions per request on one set beside its measured gain in time.
type iprRow struct{ Variant, Set, IPR, Change, TimeGain string }

type unavailableRow struct{ Name, Reason, Detail string }

// buildRow is one variant's build: how it was obtained and each step's time.
type buildRow struct {
	Name, Status, Prefix, Key, LogDir, PHPFPM string
	Steps                                     [][2]string
	Warnings                                  []string
}

// setLabel names a verification set for a reader.
func setLabel(set string) string {
	switch set {
	case phpbuild.SetTrain:
		return "training URLs"
	case phpbuild.SetHoldout:
		return "held-out URLs"
	case phpbuild.SetGuard:
		return "guard (Zend/bench.php)"
	}
	return set
}

// setShort names a set where room is short (chart rows).
func setShort(set string) string {
	if set == phpbuild.SetGuard {
		return "guard"
	}
	return setLabel(set)
}

// BuildHTML writes report.html for a build result: the verified gain of each variant against the baseline on
// the training, held-out and guard sets with its interval and verdict (the level said once, in words), the charts, throughput through php-fpm,
// instructions per request as a cross-check, the variants not available and why, the builds' steps, the
// configuration and the environment. Sections whose data the result lacks (no verification) are left out.
func BuildHTML(w io.Writer, r *phpbuild.Result) error {
	p := buildPage{R: r, Title: "phptune build: PHP " + r.Source.Version, Level: buildLevelSentence(r)}
	if r.App != "" {
		p.Title += " for " + r.App
	}
	for _, v := range r.Variants {
		if v.Name == phpbuild.Baseline || len(v.GainPct) == 0 {
			continue
		}
		p.Lede = append(p.Lede, buildLede(v))
		for _, set := range phpbuild.SetNames {
			g, ok := v.GainPct[set]
			if !ok {
				continue
			}
			ci := v.GainCIPct[set]
			card := heroCard{Big: signedPct(g), Label: v.Name + " on the " + setLabel(set),
				CI: fmt.Sprintf("interval [%s, %s]", signedPct(ci[0]), signedPct(ci[1])), Verdict: stats.Verdict(v.Verdict[set]),
				Main: v.Name == phpbuild.PGO && set == phpbuild.SetTrain}
			if b := r.Variant(phpbuild.Baseline); b != nil && b.TimePerReqUS[set] > 0 {
				card.Sub = fmt.Sprintf("%s against %s per request (medians of %d interleaved rounds)", us(v.TimePerReqUS[set]), us(b.TimePerReqUS[set]), r.Rounds)
			}
			p.Cards = append(p.Cards, card)
		}
	}
	for _, c := range []*chart{gainChart(r), timeChart(r), throughputChart(r), stepsChart(r)} {
		if c != nil {
			p.Charts = append(p.Charts, c)
		}
	}
	p.Times = timeRows(r)
	for _, v := range r.Variants {
		if t := v.Throughput; t != nil {
			p.Throughput = append(p.Throughput, throughputRow{Variant: v.Name, RPS: rate(t.RPS), BaselineRPS: rate(t.BaselineRPS),
				Gain: signedPct(t.GainPct), CI: fmt.Sprintf("[%s, %s]", signedPct(t.GainCIPct[0]), signedPct(t.GainCIPct[1])),
				Trials: t.Trials, Verdict: stats.Verdict(t.Verdict)})
		}
	}
	p.IPR, p.IPRCaveat = iprRows(r)
	for _, v := range r.Variants {
		if !v.Available {
			first, rest, _ := strings.Cut(strings.TrimSpace(v.Reason), "\n")
			p.Unavailable = append(p.Unavailable, unavailableRow{Name: v.Name, Reason: first, Detail: rest})
		}
	}
	p.Builds = buildRows(r)
	p.Env = buildEnv(r)
	var buf bytes.Buffer
	if err := pageTmpl.ExecuteTemplate(&buf, "build.tmpl", p); err != nil {
		return fmt.Errorf("render report: %w", err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// buildLede says a variant's outcome on every set in words that claim no more than the verdicts:
// no_difference is "no measurable difference", never "no gain".
func buildLede(v *phpbuild.VariantResult) string {
	var parts []string
	for _, set := range phpbuild.SetNames {
		g, ok := v.GainPct[set]
		if !ok {
			continue
		}
		ci := v.GainCIPct[set]
		span := fmt.Sprintf("interval %s to %s", signedPct(ci[0]), signedPct(ci[1]))
		var s string
		switch stats.Verdict(v.Verdict[set]) {
		case stats.Better:
			s = fmt.Sprintf("%.1f%% less time per request (%s)", g, span)
		case stats.Worse:
			s = fmt.Sprintf("%.1f%% more time per request (%s)", -g, span)
		case stats.Insufficient:
			s = fmt.Sprintf("too few rounds for a verdict (estimate %s, %s)", signedPct(g), span)
		default:
			s = fmt.Sprintf("no measurable difference (estimate %s, %s)", signedPct(g), span)
		}
		parts = append(parts, setLabel(set)+": "+s)
	}
	return fmt.Sprintf("%s against the baseline: %s.", v.Name, strings.Join(parts, "; "))
}

// gainChart is a forest plot of each variant's gain in time per request on each set, with its interval.
func gainChart(r *phpbuild.Result) *chart {
	var rows []forestRow
	for _, v := range r.Variants {
		for _, set := range phpbuild.SetNames {
			g, ok := v.GainPct[set]
			if !ok || v.Name == phpbuild.Baseline {
				continue
			}
			ci := v.GainCIPct[set]
			verdict := stats.Verdict(v.Verdict[set])
			label := v.Name + ": " + setShort(set)
			tip := fmt.Sprintf("%s on the %s: gain %s (interval %s to %s), %s; %s per request against the baseline's %s, %d rounds", v.Name, setLabel(set), signedPct(g),
				signedPct(ci[0]), signedPct(ci[1]), verdictText(verdict), us(v.TimePerReqUS[set]), baselineTime(r, set), r.Rounds)
			rows = append(rows, forestRow{Label: label, S: stats.Comparison{N: r.Rounds, Estimate: g / 100, Lo: ci[0] / 100, Hi: ci[1] / 100, Verdict: verdict}, Tip: tip})
		}
	}
	c := forestChart("gain", "Gain against the baseline, time per request", "gain: less time per request than the baseline, with its interval", rows)
	if c != nil {
		c.Caption = fmt.Sprintf("php-cgi -T pinned to CPU %d, %d interleaved rounds in balanced orders, stopped once every comparison was decided. "+
			"The gain is the estimate of the per-round ratio of the variant's time per request to the baseline's, with the "+
			"interval its verdict was decided on. %s A verdict is "+
			"better or worse only when the interval excludes zero and the gain is at least %.0f%%; no difference means the interval lies within "+
			"it; inconclusive, that the rounds ran out first.", r.CPU, r.Rounds, buildLevelSentence(r), 100*stats.DefaultMinEffect)
	}
	return c
}

func baselineTime(r *phpbuild.Result, set string) string {
	if b := r.Variant(phpbuild.Baseline); b != nil && b.TimePerReqUS[set] > 0 {
		return us(b.TimePerReqUS[set])
	}
	return "?"
}

// throughputChart is each variant's change in requests/s through php-fpm, with its interval.
func throughputChart(r *phpbuild.Result) *chart {
	var rows []forestRow
	for _, v := range r.Variants {
		t := v.Throughput
		if t == nil {
			continue
		}
		verdict := stats.Verdict(t.Verdict)
		tip := fmt.Sprintf("%s through php-fpm: %s req/s against the baseline's %s: %s (interval %s to %s), %s, %d trials", v.Name, rate(t.RPS), rate(t.BaselineRPS),
			signedPct(t.GainPct), signedPct(t.GainCIPct[0]), signedPct(t.GainCIPct[1]), verdictText(verdict), t.Trials)
		rows = append(rows, forestRow{Label: v.Name + ": php-fpm req/s", S: stats.Comparison{N: t.Trials, Estimate: t.GainPct / 100,
			Lo: t.GainCIPct[0] / 100, Hi: t.GainCIPct[1] / 100, Verdict: verdict}, Tip: tip})
	}
	c := forestChart("throughput", "Throughput through php-fpm against the baseline", "change in requests/s, with its interval", rows)
	if c != nil {
		c.Caption = "Each variant's php-fpm with one worker serving the training URLs over FastCGI, in interleaved trials against the baseline's; " +
			"each comparison judged by the same rule as the time per request, on the same shared level."
	}
	return c
}

// timeChart shows the time per request of every variant, one panel per set (their scales differ a
// hundredfold: a page against bench.php), each from zero.
func timeChart(r *phpbuild.Result) *chart {
	type row struct {
		name string
		us   float64
	}
	var panels [][]row
	var sets []string
	for _, set := range phpbuild.SetNames {
		var rows []row
		for _, v := range r.Variants {
			if t, ok := v.TimePerReqUS[set]; ok && t > 0 {
				rows = append(rows, row{v.Name, t})
			}
		}
		if len(rows) > 0 {
			panels, sets = append(panels, rows), append(sets, set)
		}
	}
	if len(panels) == 0 {
		return nil
	}
	const left, rowH, head, axis = 210.0, 26.0, 22.0, 48.0
	c := &chart{ID: "time", Title: "Time per request", W: chartW}
	y0 := padTop - 16
	for i, rows := range panels {
		top := 0.0
		for _, rw := range rows {
			top = math.Max(top, rw.us)
		}
		ticks := niceTicks(0, top*1.15, 5)
		xs := scale{D0: 0, D1: math.Max(ticks[len(ticks)-1], top*1.15), R0: left, R1: c.W - padRight - 60}
		c.text(left, y0+14, setLabel(sets[i]), "start", "row-label")
		bottom := y0 + head + rowH*float64(len(rows))
		for _, v := range ticks {
			x := xs.at(v)
			c.line(x, y0+head, x, bottom, "grid")
			c.text(x, bottom+16, zeroOr(msLabel, v), "middle", "tick")
		}
		c.line(xs.R0, bottom, xs.R1, bottom, "axis")
		for j, rw := range rows {
			y := y0 + head + rowH*float64(j) + 4
			c.text(left-10, y+13, rw.name, "end", "row-label")
			wd := math.Max(xs.at(rw.us)-left, 1)
			tip := fmt.Sprintf("%s on the %s: %s per request (median of %d rounds)", rw.name, setLabel(sets[i]), us(rw.us), r.Rounds)
			c.mark(el{Kind: "rect", X: left, Y: y, W: wd, H: rowH - 8, Class: "bar", Title: tip})
			c.text(left+wd+6, y+13, msLabel(rw.us), "start", "row-value")
		}
		y0 = bottom + axis - 10
	}
	c.H = y0 // the height drawn, known only once every panel is laid out
	c.Caption = fmt.Sprintf("The median over %d rounds of each variant's time per request (php-cgi -T, pinned to CPU %d), one panel per set, each from zero.", r.Rounds, r.CPU)
	return c
}

func timeRows(r *phpbuild.Result) []timeRow {
	var out []timeRow
	for _, set := range phpbuild.SetNames {
		for _, v := range r.Variants {
			t, ok := v.TimePerReqUS[set]
			if !ok {
				continue
			}
			row := timeRow{Variant: v.Name, Set: setLabel(set), Time: us(t)}
			if g, ok := v.GainPct[set]; ok {
				ci := v.GainCIPct[set]
				row.Gain, row.CI, row.Verdict = signedPct(g), fmt.Sprintf("[%s, %s]", signedPct(ci[0]), signedPct(ci[1])), stats.Verdict(v.Verdict[set])
			} else {
				row.Reference = true
			}
			out = append(out, row)
		}
	}
	return out
}

// iprRows are the instruction counts with their change against the baseline, and a caveat that quotes this
// result's own figures where it can: the count moves with the gain but understates it.
func iprRows(r *phpbuild.Result) ([]iprRow, string) {
	var rows []iprRow
	caveat := ""
	for _, set := range phpbuild.SetNames {
		for _, v := range r.Variants {
			n, ok := v.IPR[set]
			if !ok || n <= 0 {
				continue
			}
			row := iprRow{Variant: v.Name, Set: setLabel(set), IPR: mega(n)}
			if c, ok := v.IPRChangePct[set]; ok {
				row.Change = signedPct(c)
			}
			if g, ok := v.GainPct[set]; ok {
				row.TimeGain = signedPct(g)
				if c, ok := v.IPRChangePct[set]; ok && caveat == "" && v.Name == phpbuild.PGO {
					caveat = fmt.Sprintf(" Here %s on the %s: %s instructions against a gain of %s in time.", v.Name, setLabel(set), signedPct(c), signedPct(g))
				}
			} else {
				row.TimeGain = "(reference)"
			}
			rows = append(rows, row)
		}
	}
	return rows, caveat
}

func buildRows(r *phpbuild.Result) []buildRow {
	var out []buildRow
	for _, v := range r.Variants {
		if !v.Available && len(v.Steps) == 0 {
			continue // never attempted (e.g. BOLT not installed): its reason is in the unavailable list
		}
		b := buildRow{Name: v.Name, Prefix: v.Prefix, Key: v.Key, LogDir: v.LogDir, PHPFPM: v.PHPFPM, Warnings: v.Warnings}
		switch {
		case v.Name == phpbuild.Debian:
			b.Status = "Debian's own binary, not built"
		case v.Of != "":
			b.Status = v.Of + "'s binaries, run with " + v.Setting
		case !v.Available:
			b.Status = "failed"
		case v.Cached:
			b.Status = "cached: reused from an earlier build"
			if v.BuildSeconds > 0 {
				b.Status += " that took " + wholeSecs(v.BuildSeconds)
			}
		default:
			b.Status = "built in " + wholeSecs(v.BuildSeconds)
		}
		for _, s := range v.Steps {
			b.Steps = append(b.Steps, [2]string{s.Name, wholeSecs(s.Seconds)})
		}
		out = append(out, b)
	}
	return out
}

func buildEnv(r *phpbuild.Result) [][2]string {
	src := r.Source.Version
	if r.Source.Origin != "" {
		src += " (" + r.Source.Origin + ")"
	}
	hash := r.Source.Hash
	if len(hash) > 16 {
		hash = hash[:16]
	}
	verify := ""
	if r.Rounds > 0 {
		verify = fmt.Sprintf("%d interleaved rounds of php-cgi -T pinned to CPU %d", r.Rounds, r.CPU)
	}
	kv := [][2]string{
		{"PHP source", src},
		{"source path", r.Source.Path},
		{"source hash", hash},
		{"installed PHP", r.InstalledPHP},
		{"app trained on", r.App},
		{"training URLs", strings.Join(r.Train, "  ")},
		{"held-out URLs", strings.Join(r.Holdout, "  ")},
		{"guard", r.Guard},
		{"verification", verify},
		{"build cache", r.CacheDir},
	}
	if e := r.Environment; e != nil {
		h := e.Host
		cpu, started := "", ""
		if h.CPUs > 0 {
			cpu = fmt.Sprintf("%s, %d CPUs usable (%d online)", h.CPUModel, h.CPUs, h.CPUsOnline)
		}
		if !e.Started.IsZero() {
			started = e.Started.Format("2006-01-02 15:04:05 MST")
		}
		kv = append(kv, [][2]string{
			{"CPU", cpu},
			{"memory", bytesOrEmpty(h.MemTotal)},
			{"kernel", h.Kernel},
			{"compiler", e.Compiler},
			{"started", started},
			{"command", strings.Join(e.CommandLine, " ")},
		}...)
	}
	return nonEmpty(kv)
}

// zeroOr labels a tick with f, and zero as a plain 0 (not "0µs").
func zeroOr(f func(float64) string, v float64) string {
	if v == 0 {
		return "0"
	}
	return f(v)
}

// stepClass sorts a build step into preparing, compiling and training, the three colours of the steps chart.
func stepClass(name string) string {
	switch {
	case strings.HasPrefix(name, "make") && name != "make prof-clean":
		return "step-make"
	case name == "unpack" || name == "configure" || name == "install":
		return "step-prep"
	}
	return "step-train"
}

// stepsChart shows where each variant's build time went, one stacked bar a variant, a segment a step.
func stepsChart(r *phpbuild.Result) *chart {
	var vs []*phpbuild.VariantResult
	top := 0.0
	for _, v := range r.Variants {
		total := 0.0
		for _, s := range v.Steps {
			total += s.Seconds
		}
		if total > 0 {
			vs = append(vs, v)
			top = math.Max(top, total)
		}
	}
	if len(vs) == 0 {
		return nil
	}
	const left, rowH = 210.0, 30.0
	c := &chart{ID: "steps", Title: "Build time by step", W: chartW, H: padTop + rowH*float64(len(vs)) + padBot}
	bottom := c.H - padBot
	unit, name := 60.0, "minutes"
	if top < 120 {
		unit, name = 1, "seconds"
	}
	ticks := niceTicks(0, top*1.05/unit, 6)
	xs := scale{D0: 0, D1: math.Max(ticks[len(ticks)-1], top*1.05/unit), R0: left, R1: c.W - padRight - 200}
	xAxis(c, xs, ticks, fnum, padTop, bottom, "build time, "+name)
	for i, v := range vs {
		y := padTop + rowH*float64(i) + 5
		label := v.Name
		switch {
		case !v.Available:
			label += " (failed)"
		case v.Cached:
			label += " (cached)"
		}
		c.text(left-10, y+14, label, "end", "row-label")
		x, total := left, 0.0
		for _, s := range v.Steps {
			wd := math.Max(xs.at(s.Seconds/unit)-left, 1)
			c.mark(el{Kind: "rect", X: x, Y: y, W: wd, H: rowH - 10, Class: stepClass(s.Name), Title: fmt.Sprintf("%s: %s %s", v.Name, s.Name, wholeSecs(s.Seconds))})
			x += wd
			total += s.Seconds
		}
		text := wholeSecs(total)
		if v.BuildSeconds > total+1 {
			// The manifest is written during the install step, so the steps leave out its time.
			text += " (" + wholeSecs(v.BuildSeconds) + " with install)"
		}
		c.text(x+6, y+14, text, "start", "row-value")
	}
	c.Legend = []legendItem{{"step-prep", "unpack, configure"}, {"step-make", "compile (make, prof-gen, prof-use)"}, {"step-train", "training, profile check, prof-clean"}}
	c.Caption = "Each variant's build steps as timed when it was built; a cached variant was built by an earlier run and reused unchanged."
	return c
}
