package clients

import (
	"fmt"
	"html"
	"io"
	"math"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"
)

// Schema is the JSON schema of a clients report.
const Schema = "phptune/clients/v1"

// Report is a run's JSON document.
type Report struct {
	Schema      string    `json:"schema"`
	Partial     bool      `json:"partial"`
	Started     time.Time `json:"started"`
	Seconds     float64   `json:"seconds"`
	Command     []string  `json:"command"`
	Environment struct {
		CPUs     int      `json:"cpus"`
		PHP      string   `json:"php"`
		Servers  []string `json:"servers"`
		Phpredis bool     `json:"phpredis"`
	} `json:"environment"`
	Settings Settings `json:"settings"`
	Outcome
}

// NewReport is the report of a run of c on php, started now by the command line command.
func NewReport(c Config, php *PHP, command []string) *Report {
	r := &Report{Schema: Schema, Started: time.Now().UTC(), Command: command, Settings: SettingsOf(c)}
	r.Environment.CPUs = runtime.NumCPU()
	r.Environment.PHP, r.Environment.Phpredis = php.Version, php.Phpredis
	return r
}

// Failed names the arms that failed, each as its target, operation and model.
func (r *Report) Failed() []string {
	var failed []string
	for _, a := range r.Results {
		if a.Error != "" {
			failed = append(failed, a.Target+" "+a.Op+" "+a.Label())
		}
	}
	return failed
}

// Settings is the run's plan, as the report shows it.
type Settings struct {
	Revs            int     `json:"revs"`
	Iterations      int     `json:"iterations"`
	Warmup          int     `json:"warmup"`
	PauseS          float64 `json:"pause_s"`
	Interleaved     bool    `json:"interleaved"`
	RetryThreshold  float64 `json:"retry_threshold"`
	RetryLimit      int     `json:"retry_limit"`
	Fibers          []int   `json:"fibers"`
	Procs           []int   `json:"procs"`
	Depths          []int   `json:"depths"`
	SweepIterations int     `json:"sweep_iterations"`
	SweepRevs       int     `json:"sweep_revs"`
	MinEffect       float64 `json:"min_effect"`
	Alpha           float64 `json:"alpha"`
}

// SettingsOf is cfg's settings.
func SettingsOf(c Config) Settings {
	return Settings{Revs: c.Revs, Iterations: c.Iterations, Warmup: c.Warmup, PauseS: c.Pause.Seconds(),
		Interleaved: !c.Sequential, RetryThreshold: c.RetryThreshold, RetryLimit: c.RetryLimit, Fibers: c.Fibers,
		Procs: c.Procs, Depths: c.Depths, SweepIterations: c.SweepIterations, SweepRevs: c.SweepRevs,
		MinEffect: c.MinEffect, Alpha: c.alpha()}
}

func num(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// Table writes the terminal summary: a row per target, op and model, then the sweeps' picks and the ceilings.
func Table(w io.Writer, r *Report) {
	if r.Partial {
		fmt.Fprintln(w, "PARTIAL: interrupted; the rows below are what was measured.")
	}
	mode := "interleaved"
	if !r.Settings.Interleaved {
		mode = "sequential"
	}
	fmt.Fprintf(w, "phptune clients: %d revs x at most %d iterations per arm (%s), warm-up %d, php -n %s, %d CPUs\n",
		r.Settings.Revs, r.Settings.Iterations, mode, r.Settings.Warmup, r.Environment.PHP, r.Environment.CPUs)
	if r.Settings.RetryThreshold > 0 {
		fmt.Fprintf(w, "retry threshold %.1f%% (limit %d); retries are counted per row\n", r.Settings.RetryThreshold, r.Settings.RetryLimit)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "target\top\tmodel\tconc\tops/s\t95% CI\tspeedup\t95% CI\tverdict\tcpu/op us\t")
	many := map[string]int{}
	for _, row := range r.Results {
		many[row.Target+row.Op+row.Model+row.Client]++
	}
	for _, row := range r.Results {
		model := row.Label()
		if row.Best && many[row.Target+row.Op+row.Model+row.Client] > 1 {
			model += " *"
		}
		if !row.Available {
			fmt.Fprintf(tw, "%s\t%s\t%s\t-\t-\t\t\t\t\t\t\n", row.Target, row.Op, row.Model)
			continue
		}
		ops, ci, sp, spci, verdict, cpu := "-", "", "-", "", "", ""
		if row.OpsPerS != nil {
			ops = num(*row.OpsPerS)
			cpu = num(row.ClientCPUPerOpUS)
		}
		if row.CILow != nil {
			ci = num(*row.CILow) + ".." + num(*row.CIHigh)
		}
		if row.Speedup != nil {
			sp = fmt.Sprintf("%.2fx", *row.Speedup)
		}
		if row.SpeedupLow != nil {
			spci = fmt.Sprintf("%.2f..%.2f", *row.SpeedupLow, *row.SpeedupHigh)
		}
		if row.Comparison != nil && row.Comparison.Verdict != "" {
			verdict = string(row.Comparison.Verdict)
		}
		if row.Error != "" {
			verdict = "FAILED"
		}
		if row.Retries > 0 {
			verdict += fmt.Sprintf(" (%d retries)", row.Retries)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t\n", row.Target, row.Op, model, row.Concurrency, ops, ci, sp, spci, verdict, cpu)
	}
	tw.Flush()
	notes := map[string]bool{}
	for _, row := range r.Results {
		if row.Error != "" {
			fmt.Fprintf(w, "  %s %s %s failed: %s\n", row.Target, row.Op, row.Label(), row.Error)
		}
		if row.Available && row.Note != "" {
			fmt.Fprintf(w, "  %s %s %s: %s\n", row.Target, row.Op, row.Label(), row.Note)
		}
		if !row.Available && !notes[row.Model+row.Note] {
			notes[row.Model+row.Note] = true
			fmt.Fprintf(w, "  %s: %s\n", row.Model, row.Note)
		}
	}
	if picks := sweepSummary(r.Sweeps); picks != "" {
		fmt.Fprint(w, picks)
	}
	for _, c := range r.Ceilings {
		fmt.Fprintf(w, "  ceiling %s %s: sync waits %.1f us of %.1f us per op (client CPU %.1f us, server CPU %.1f us): one process can reach %.0f ops/s (%.1fx), this machine's %d CPUs %.0f ops/s (%.1fx)\n",
			c.Target, c.Op, c.WaitPerOpUS, c.WallPerOpUS, c.ClientCPUPerOpUS, c.ServerCPUPerOpUS, c.OneProcessOpsS, c.OneProcessX, c.CPUs, c.MachineOpsS, c.MachineX)
	}
	fmt.Fprintln(w, "  * its model's pick, raced against its neighbours. speedup: over sync with phptune's client, from the")
	fmt.Fprintf(w, "    paired rounds, with its confidence-sequence interval; verdicts at +-%.0f%% within the run's error budget of %.2g\n",
		100*r.Settings.MinEffect, r.Settings.Alpha)
}

// sweepSummary says, per target, op and model, which candidate the sweep picked among which.
func sweepSummary(ps []SweepPoint) string {
	var b strings.Builder
	type key struct{ t, op, m string }
	seen := map[key]bool{}
	for _, p := range ps {
		k := key{p.Target, p.Op, p.Model}
		if seen[k] {
			continue
		}
		seen[k] = true
		var cands []string
		pick := ""
		for _, q := range ps {
			if (key{q.Target, q.Op, q.Model}) != k {
				continue
			}
			c := fmt.Sprintf("%d: %s", q.Concurrency, num(q.OpsPerS))
			if q.Note != "" {
				c += " (" + q.Note + ")"
			}
			cands = append(cands, c)
			if q.Picked {
				pick = q.Label()
			}
		}
		fmt.Fprintf(&b, "  sweep of %s for %s %s picked %s (ops/s by concurrency: %s)\n", p.Model, p.Target, p.Op, pick, strings.Join(cands, ", "))
	}
	return b.String()
}

// HTML writes a self-contained page: per target and op, a bar chart of the speedup over sync with its 95% CI
// (inline SVG, no scripts), and the table.
func HTML(w io.Writer, r *Report) error {
	var b strings.Builder
	b.WriteString(`<!doctype html><html><head><meta charset="utf-8"><title>phptune clients</title><style>
body{font:14px system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse}td,th{padding:2px 8px;text-align:right;border-bottom:1px solid #ddd}
th{text-align:left}td:nth-child(-n+3){text-align:left}svg text{font:12px system-ui,sans-serif}</style></head><body>
<h1>phptune clients</h1>`)
	if r.Partial {
		b.WriteString("<p><b>Partial: the run was interrupted.</b></p>")
	}
	mode := "interleaved"
	if !r.Settings.Interleaved {
		mode = "sequential"
	}
	fmt.Fprintf(&b, "<p>%d revolutions x %d iterations per arm, %s; PHP %s; %d CPUs; %s. Bars: the speedup over sync with phptune's client (paired rounds), whiskers its confidence-sequence interval; * its model's pick.</p>",
		r.Settings.Revs, r.Settings.Iterations, mode, html.EscapeString(r.Environment.PHP),
		r.Environment.CPUs, html.EscapeString(strings.Join(r.Environment.Servers, "; ")))
	type key struct{ t, op string }
	var order []key
	groups := map[key][]Row{}
	for _, row := range r.Results {
		k := key{row.Target, row.Op}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		if row.Available && row.Speedup != nil {
			groups[k] = append(groups[k], row)
		} else if _, ok := groups[k]; !ok {
			groups[k] = nil
		}
	}
	for _, k := range order {
		fmt.Fprintf(&b, "<h2>%s %s: speedup over sync</h2>\n", html.EscapeString(k.t), html.EscapeString(k.op))
		b.WriteString(chart(groups[k]))
	}
	b.WriteString("<h2>All rows</h2><table><tr><th>target</th><th>op</th><th>model</th><th>concurrency</th><th>ops/s</th><th>95% CI</th><th>speedup</th><th>95% CI</th><th>verdict</th><th>note</th></tr>\n")
	for _, row := range r.Results {
		cell := func(p *float64, f string) string {
			if p == nil {
				return ""
			}
			return fmt.Sprintf(f, *p)
		}
		verdict, note := "", row.Note
		if row.Comparison != nil {
			verdict = string(row.Comparison.Verdict)
		}
		if row.Error != "" {
			verdict, note = "failed", row.Error
		}
		interval := func(lo, hi *float64, f string) string {
			if lo == nil || hi == nil {
				return ""
			}
			return fmt.Sprintf(f+".."+f, *lo, *hi)
		}
		fmt.Fprintf(&b, "<tr><td>%s</td><td>%s</td><td>%s</td><td>%d</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n",
			html.EscapeString(row.Target), html.EscapeString(row.Op), html.EscapeString(row.Label()), row.Concurrency,
			cell(row.OpsPerS, "%.0f"), interval(row.CILow, row.CIHigh, "%.0f"), cell(row.Speedup, "%.2fx"),
			interval(row.SpeedupLow, row.SpeedupHigh, "%.2f"), verdict, html.EscapeString(note))
	}
	b.WriteString("</table></body></html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// chart draws the speedups as bars from 1x on a log scale (pipelining can be 20 times sync, a slow model half
// of it), with CI whiskers.
func chart(rows []Row) string {
	if len(rows) == 0 {
		return "<p>no measured rows</p>\n"
	}
	const left, width, bar, gap = 230.0, 460.0, 18.0, 8.0
	top := 10.0
	lo, hi := 0.5, 2.0
	for _, r := range rows {
		lo = math.Min(lo, math.Min(*r.Speedup, valueOr(r.SpeedupLow, *r.Speedup)))
		hi = math.Max(hi, math.Max(*r.Speedup, valueOr(r.SpeedupHigh, *r.Speedup)))
	}
	lo, hi = lo/1.2, hi*1.2
	x := func(v float64) float64 { return left + math.Log(v/lo)/math.Log(hi/lo)*width }
	axis := top + float64(len(rows))*(bar+gap)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" role="img">`+"\n", left+width+70, axis+24)
	for _, v := range []float64{0.1, 0.2, 0.5, 1, 2, 3, 5, 10, 20, 50, 100, 200} {
		if v < lo || v > hi {
			continue
		}
		fmt.Fprintf(&b, `<path d="M%.1f %.1fV%.1f" stroke="#ddd"/><text x="%.1f" y="%.1f" text-anchor="middle">%gx</text>`+"\n",
			x(v), top-4, axis, x(v), axis+16, v)
	}
	for i, r := range rows {
		y := top + float64(i)*(bar+gap)
		color := "#4a7ebb"
		if r.Client != ClientOurs {
			color = "#999"
		}
		x0, x1 := math.Min(x(1), x(*r.Speedup)), math.Max(x(1), x(*r.Speedup))
		label := r.Label()
		if r.Best && r.Model != ModelSync {
			label += " *"
		}
		fmt.Fprintf(&b, `<text x="%.0f" y="%.1f" text-anchor="end">%s</text>`, left-6, y+bar-5, html.EscapeString(label))
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.0f" fill="%s"/>`, x0, y, math.Max(x1-x0, 1), bar, color)
		if r.SpeedupLow != nil {
			l, u := x(*r.SpeedupLow), x(*r.SpeedupHigh)
			fmt.Fprintf(&b, `<path d="M%.1f %.1fH%.1fM%.1f %.1fv%.0fM%.1f %.1fv%.0f" stroke="#111" fill="none"/>`,
				l, y+bar/2, u, l, y+4, bar-8, u, y+4, bar-8)
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f">%.2fx</text>`+"\n", math.Max(x1, x(valueOr(r.SpeedupHigh, 0.0001)))+6, y+bar-5, *r.Speedup)
	}
	fmt.Fprintf(&b, `<path d="M%.1f %.1fV%.1f" stroke="#c33" stroke-dasharray="4 3"/>`, x(1), top-4, axis)
	b.WriteString("</svg>\n")
	return b.String()
}

func valueOr(p *float64, d float64) float64 {
	if p == nil {
		return d
	}
	return *p
}
