package report

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/profile"
	"github.com/phptune/phptune/internal/stats"
	"github.com/phptune/phptune/internal/tune"
)

//go:embed html/*.tmpl
var htmlFS embed.FS

// The page is one file that works offline: styles inline, charts as inline SVG, no script needed (a few lines
// copy the config files to the clipboard). html/template escapes every figure and string taken from a result.
var pageTmpl = template.Must(template.New("page").Funcs(template.FuncMap{
	"pct":     signedPct,
	"mul100":  func(v float64) float64 { return 100 * v },
	"rate":    rate,
	"lat":     msLabel,
	"bytes":   func(b int64) string { return bytesLabel(float64(b)) },
	"num":     fnum,
	"verdict": verdictText,
	"metric":  metricLabel,
	"vclass":  verdictClass,
	"secs":    secs,
	"wsecs":   wholeSecs,
	"unset":   orUnset,
	"vs":      func(name, compared string) string { return strings.ReplaceAll(compared, name+"=", "") },
	"cpu":     func(m map[string]float64, k string) string { return cpuCell(m[k]) },
}).ParseFS(htmlFS, "html/*.tmpl"))

// tunePage is what the tune template renders: the result and what is derived from it for the page.
type tunePage struct {
	R        *tune.Result
	Title    string
	Hero     []heroCard
	Lede     string
	Charts   []*chart
	Variants []variant
	Files    []configFile
	Env      [][2]string
	Plan     [][2]string
	Screens  []screenRow
	Profile  []profileRow
	Syscalls []syscallRow
}

// screenRow is one screened candidate: its work per request against the starting point's.
type screenRow struct {
	Knob, Value, Instr, Sys, Outcome string
	Survived                         bool
}

// profileRow is one figure of the per-request profile, baseline beside recommendation.
type profileRow struct{ Name, Base, Rec, Diff string }

// syscallRow is one system call's count per request in both profiles.
type syscallRow struct {
	Name      string
	Base, Rec float64
}

type heroCard struct {
	Big, Label, CI, Sub string
	Verdict             stats.Verdict
	Main                bool
}

type configFile struct{ Name, Text string }

// TuneHTML writes report.html for a tune result. files are the recommended configuration files by name
// (php-fpm-pool.conf, php.ini, nginx-upstream.conf) with their contents; a partial run has none. Sections
// whose data the result lacks are left out.
func TuneHTML(w io.Writer, r *tune.Result, files map[string]string) error {
	p := tunePage{R: r, Title: "phptune tune: " + r.App}
	vs := variants(r)
	p.Hero = hero(r)
	p.Lede = lede(r)
	for _, c := range []*chart{saturationChart(r.Saturation), effectsChart(r.Comparisons), latencyChart(vs), memoryChart(vs, r.PoolSize),
		soakChart(r.Soak)} {
		if c != nil {
			p.Charts = append(p.Charts, c)
		}
	}
	captions := map[string]string{}
	if s := r.Saturation; s != nil {
		text := fmt.Sprintf("Closed-loop load on a static pool of %d workers, %d trials a point (the line joins the means; whiskers are 95%% CIs). ",
			s.Pool, r.Plan.SweepTrials)
		if s.Knee > 0 {
			text += fmt.Sprintf("The knee, %d connections, is the smallest concurrency whose throughput CI overlaps the peak's (at %d); the pool size starts from it.", s.Knee, s.Peak)
		} else {
			text += "The sweep stopped before its knee was found."
		}
		captions["saturation"] = text
	}
	captions["effects"] = effectsCaption(r)
	captions["latency"] = "For each configuration measured after the sweep, the median over its trials of each trial's percentile."
	if n := r.Plan.Concurrency; n > 0 {
		captions["latency"] += fmt.Sprintf(" The knob comparisons load %d connections.", n)
	}
	if ps := r.PoolSize; ps != nil {
		text := fmt.Sprintf("Each bar is the largest private memory (USS) of a php-fpm worker seen in that configuration's trials. The sizing counts a worker at %s "+
			"(the larger of that and PHP's own peak for a request) plus %s shared once.", bytesLabel(float64(ps.PerWorkerBytes)), bytesLabel(float64(ps.SharedBytes)))
		if ps.Memory > 0 && ps.Chosen > 0 {
			need := ps.SharedBytes + int64(ps.Chosen)*ps.PerWorkerBytes
			text += fmt.Sprintf(" The chosen pool of %d needs about %s of the %s budget", ps.Chosen, bytesLabel(float64(need)), bytesLabel(float64(ps.Memory)))
			if ps.MemoryLimit > 0 {
				text += fmt.Sprintf("; memory would allow up to %d workers", ps.MemoryLimit)
			}
			text += "."
		}
		captions["memory"] = text
	}
	if r.Soak != nil {
		captions["soak"] = soakCaption(r.Soak)
	}
	for _, c := range p.Charts {
		c.Caption = captions[c.ID]
	}
	for _, v := range vs {
		if !v.Sweep {
			p.Variants = append(p.Variants, v)
		}
	}
	known := []string{"php-fpm-pool.conf", "php.ini", "nginx-upstream.conf"}
	var extra []string
	for name := range files {
		if !contains(known, name) {
			extra = append(extra, name)
		}
	}
	sort.Strings(extra)
	for _, name := range append(known, extra...) {
		if t, ok := files[name]; ok {
			p.Files = append(p.Files, configFile{name, t})
		}
	}
	h := r.Environment.Host
	cpu, started := "", ""
	if h.CPUs > 0 {
		cpu = fmt.Sprintf("%s, %d CPUs usable (%d online)", h.CPUModel, h.CPUs, h.CPUsOnline)
	}
	if !r.Started.IsZero() {
		started = r.Started.Format("2006-01-02 15:04:05 MST")
	}
	p.Env = nonEmpty([][2]string{
		{"CPU", cpu},
		{"memory", bytesOrEmpty(h.MemTotal)},
		{"kernel", h.Kernel},
		{"transparent huge pages", h.THP},
		{"PHP", r.Environment.PHP},
		{"php-fpm", r.Environment.FPM},
		{"nginx", r.Environment.Nginx},
		{"started", started},
		{"command", strings.Join(r.CommandLine, " ")},
	})
	if r.Plan.Method != "" {
		p.Plan = [][2]string{
			{"run time", fmt.Sprintf("%s of a %s budget", wholeSecs(r.ElapsedS), wholeSecs(r.BudgetS))},
			{"decisions", fmt.Sprintf("%s; %d experiments planned%s; error budget %.2g for the whole run, minimum effect %.3g%%",
				r.Plan.Method, r.Plan.Experiments, atConns(r.Plan.Concurrency), r.Plan.Alpha, 100*r.Plan.MinEffect)},
			{"trials", fmt.Sprintf("%d recorded: throughput trials of %s warm-up and %s measured; CPU trials of %d requests", len(r.Trials),
				secs(r.Plan.WarmupS), secs(r.Plan.WindowS), r.Plan.CPURequests)},
		}
		if urls := urlList(r.URLs); len(urls) > 0 {
			p.Plan = append(p.Plan, [2]string{"URLs", strings.Join(urls, ", ")})
		}
		if r.Plan.StartsRun > 0 {
			p.Plan = append(p.Plan, [2]string{"stacks started", fmt.Sprintf("%d, %s each on average (%s of it settling a fresh pool)",
				r.Plan.StartsRun, secs(r.Plan.StartWallS), secs(r.Plan.SettleWallS))})
		}
		if len(r.Screens) > 0 {
			p.Plan = append(p.Plan, [2]string{"screening", fmt.Sprintf("%d candidates counted in %s; %d screened out, sparing their timed comparisons",
				len(r.Screens), wholeSecs(r.Plan.ScreenWallS), r.Plan.ScreenedOut)})
		}
		if r.Plan.ScreenNote != "" {
			p.Plan = append(p.Plan, [2]string{"screening policy", r.Plan.ScreenNote})
		}
	}
	p.Screens = screenRows(r.Screens)
	p.Profile, p.Syscalls = profileRows(r.Profile)
	var buf bytes.Buffer
	if err := pageTmpl.ExecuteTemplate(&buf, "tune.tmpl", p); err != nil {
		return fmt.Errorf("render report: %w", err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// effectsCaption says how the comparisons in the effects chart were decided.
func effectsCaption(r *tune.Result) string {
	if r.Plan.Method == "" {
		return "Every comparison the run made, in order, with its estimate and confidence interval."
	}
	return fmt.Sprintf("Every candidate each knob raced, in order, against the value it would replace: the estimate of the change "+
		"(in requests per CPU-second of php-fpm for CPU-only knobs, in requests/s served otherwise) and its confidence interval, "+
		"valid however early the race stopped. Each knob's values ran in the same interleaved rounds until one was shown better by at least "+
		"%.3g%%, the rest shown worse or within %.3g%% (no difference), or the knob's share of the budget ran out (inconclusive). "+
		"The run's error budget, %.2g, is shared by every pair of arms compared.", 100*r.Plan.MinEffect, 100*r.Plan.MinEffect, r.Plan.Alpha)
}

func hero(r *tune.Result) []heroCard {
	h := r.Headline
	if h == nil {
		return nil
	}
	base := h.Baseline
	if base == "" {
		base = "Debian's defaults"
	}
	var cards []heroCard
	if c := h.VsDebian; c != nil {
		cards = append(cards, heroCard{Main: true, Big: signedPct(100 * c.Estimate), Label: "throughput vs " + base,
			CI: fmt.Sprintf("%s [%s, %s]", ciName(c), signedPct(100*c.Lo), signedPct(100*c.Hi)), Verdict: c.Verdict,
			Sub: fmt.Sprintf("%s req/s against %s req/s (medians, %d interleaved rounds)", rate(h.RecommendationRPS), rate(h.DebianRPS), c.N)})
	}
	if c := h.VsRuleOfThumb; c != nil {
		cards = append(cards, heroCard{Big: signedPct(100 * c.Estimate), Label: "vs the rule of thumb",
			CI: fmt.Sprintf("%s [%s, %s]", ciName(c), signedPct(100*c.Lo), signedPct(100*c.Hi)), Verdict: c.Verdict,
			Sub: fmt.Sprintf("%s req/s against %s req/s (%s)", rate(h.RecommendationRPS), rate(h.RuleOfThumbRPS), h.RuleOfThumb)})
	}
	return cards
}

// lede says the headline in a sentence, in words that do not claim more than the verdict.
func lede(r *tune.Result) string {
	h := r.Headline
	if h == nil || h.VsDebian == nil {
		return ""
	}
	c := h.VsDebian
	base := h.Baseline
	if base == "" {
		base = "Debian's defaults"
	}
	ci := fmt.Sprintf("(%s %s to %s)", ciName(c), signedPct(100*c.Lo), signedPct(100*c.Hi))
	switch c.Verdict {
	case stats.Better:
		return fmt.Sprintf("The recommendation serves %.1f%% more requests/s than %s %s.", 100*c.Estimate, base, ci)
	case stats.Worse:
		return fmt.Sprintf("The recommendation serves %.1f%% fewer requests/s than %s %s: keep yours.", -100*c.Estimate, base, ci)
	case stats.Inconclusive:
		return fmt.Sprintf("The budget ended before the recommendation's throughput against %s was decided: %s requests/s %s. The settings below say which knobs mattered.", base, signedPct(100*c.Estimate), ci)
	}
	return fmt.Sprintf("No difference in throughput from %s was shown: %s requests/s %s. The settings below say which knobs mattered.", base, signedPct(100*c.Estimate), ci)
}

// ciName names a comparison's interval by its level: 95% for a fixed-size test, the level of the comparison's
// share of the run's error budget for a sequential one.
func ciName(c *stats.Comparison) string {
	if c.Method == "confidence-sequence" && c.Conf > 0 {
		return fmt.Sprintf("%.4g%% CI", 100*c.Conf)
	}
	return "95% CI"
}

// variants groups the trials by configuration, the recommendation and the references first.
func variants(r *tune.Result) []variant {
	rec, base := r.Recommendation.String(), r.Baseline.String()
	rule := ""
	baseName := "Debian's defaults"
	if h := r.Headline; h != nil {
		rule = h.RuleOfThumb
		if h.Baseline != "" {
			baseName = h.Baseline
		}
	}
	name := func(cfg string, sweep bool) string {
		var names []string
		if sweep {
			return "saturation sweep"
		}
		if cfg == rec && r.Headline != nil {
			names = append(names, "recommendation")
		}
		if cfg == base {
			names = append(names, baseName)
		}
		if cfg == rule && rule != "" {
			names = append(names, "rule of thumb")
		}
		if len(names) > 0 {
			return strings.Join(names, " = ")
		}
		if d := diffTokens(cfg, rec); len(d) > 0 {
			return strings.Join(d, " ")
		}
		return cfg
	}
	type acc struct {
		v                      variant
		rps, p50, p90, p99, p9 []float64
		fpm, ngx, pss          []float64
	}
	byKey := map[string]*acc{}
	var order []string
	for _, t := range r.Trials {
		sweep := t.Phase == "saturation"
		key := t.Config
		if sweep {
			key = "sweep " + key
		}
		a := byKey[key]
		if a == nil {
			a = &acc{v: variant{Name: name(t.Config, sweep), Config: t.Config, Sweep: sweep}}
			byKey[key] = a
			order = append(order, key)
		}
		a.v.Trials++
		a.v.Requests += t.Requests
		a.v.Errors += t.Errors
		a.rps = append(a.rps, t.RPS)
		if t.Requests > 0 {
			a.p50, a.p90, a.p99, a.p9 = append(a.p50, t.Latency.P50), append(a.p90, t.Latency.P90), append(a.p99, t.Latency.P99), append(a.p9, t.Latency.P999)
		}
		if v, ok := t.ServerCPU["php-fpm"]; ok {
			a.fpm = append(a.fpm, v)
		}
		if v, ok := t.ServerCPU["nginx"]; ok {
			a.ngx = append(a.ngx, v)
		}
		if t.WorkerPSS > 0 {
			a.pss = append(a.pss, float64(t.WorkerPSS))
		}
		a.v.PeakUSS = max(a.v.PeakUSS, t.WorkerUSS)
		a.v.SharedSeen = max(a.v.SharedSeen, t.WorkerShared)
	}
	rank := func(k string) int {
		switch byKey[k].v.Config {
		case rec:
			return 0
		case base:
			return 1
		case rule:
			return 2
		}
		return 3
	}
	sort.SliceStable(order, func(i, j int) bool {
		si, sj := byKey[order[i]].v.Sweep, byKey[order[j]].v.Sweep
		if si != sj {
			return sj // the sweep last
		}
		return rank(order[i]) < rank(order[j])
	})
	out := make([]variant, 0, len(order))
	for _, k := range order {
		a := byKey[k]
		a.v.RPS, a.v.P50, a.v.P90, a.v.P99, a.v.P999 = med(a.rps), med(a.p50), med(a.p90), med(a.p99), med(a.p9)
		a.v.FPMCPU, a.v.NginxCPU, a.v.MeanPSS = med(a.fpm), med(a.ngx), int64(med(a.pss))
		out = append(out, a.v)
	}
	return out
}

func med(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	return stats.Median(x)
}

// diffTokens are the settings of cfg that ref does not have ("-d k=v" kept as one).
func diffTokens(cfg, ref string) []string {
	have := map[string]bool{}
	for _, t := range tokens(ref) {
		have[t] = true
	}
	var d []string
	for _, t := range tokens(cfg) {
		if !have[t] {
			d = append(d, t)
		}
	}
	return d
}

func tokens(s string) []string {
	var out []string
	f := strings.Fields(s)
	for i := 0; i < len(f); i++ {
		if f[i] == "-d" && i+1 < len(f) {
			out = append(out, "-d "+f[i+1])
			i++
			continue
		}
		out = append(out, f[i])
	}
	return out
}

func nonEmpty(kv [][2]string) [][2]string {
	var out [][2]string
	for _, p := range kv {
		if strings.TrimSpace(p[1]) != "" {
			out = append(out, p)
		}
	}
	return out
}

func bytesOrEmpty(b int64) string {
	if b <= 0 {
		return ""
	}
	return bytesLabel(float64(b))
}

func cpuCell(v float64) string {
	if v <= 0 || math.IsNaN(v) {
		return ""
	}
	return fnum(v) + " µs"
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// wholeSecs formats a run's length to the second.
func wholeSecs(s float64) string {
	return time.Duration(math.Round(s) * float64(time.Second)).String()
}

// atConns says at what load the comparisons ran, when the run got that far.
func atConns(n int) string {
	if n <= 0 {
		return ""
	}
	return fmt.Sprintf(" at %d connections", n)
}

func screenRows(screens []tune.Screen) []screenRow {
	var out []screenRow
	for _, sc := range screens {
		row := screenRow{Knob: sc.Knob, Value: sc.Value, Survived: sc.Survived}
		if sc.Cand.InstructionsPerReq > 0 {
			row.Instr = fmt.Sprintf("%s → %s (%+.1f%%)", mega(sc.Base.InstructionsPerReq), mega(sc.Cand.InstructionsPerReq),
				100*(sc.Cand.InstructionsPerReq/sc.Base.InstructionsPerReq-1))
			row.Sys = fmt.Sprintf("%.1f → %.1f", sc.Base.SyscallsPerReq, sc.Cand.SyscallsPerReq)
			if !sc.Cand.SyscallsCounted && sc.Cand.SyscallsPerReq == 0 { // results before syscalls_counted counted them always
				row.Sys = "not counted: the instructions differ"
			}
		}
		switch {
		case !sc.Survived:
			row.Outcome = "screened out: no timed trials"
		case sc.Cand.InstructionsPerReq == 0:
			row.Outcome = sc.Note
		default:
			row.Outcome = "timed trials decide"
		}
		out = append(out, row)
	}
	return out
}

func mega(n float64) string { return fmt.Sprintf("%.2f M", n/1e6) }

// profileRows lays the profile's first two variants (the baseline and the recommendation) side by side.
func profileRows(pr *profile.Result) ([]profileRow, []syscallRow) {
	if pr == nil || len(pr.Variants) < 2 {
		return nil, nil
	}
	b, c := pr.Variants[0], pr.Variants[1]
	diff := func(x, y float64) string {
		if x == 0 {
			return ""
		}
		return fmt.Sprintf("%+.1f%%", 100*(y/x-1))
	}
	rows := []profileRow{
		{"system calls per request", fmt.Sprintf("%.1f", b.SyscallsPerReq), fmt.Sprintf("%.1f", c.SyscallsPerReq), diff(b.SyscallsPerReq, c.SyscallsPerReq)},
		{"instructions per request", mega(b.InstructionsPerReq), mega(c.InstructionsPerReq), diff(b.InstructionsPerReq, c.InstructionsPerReq)},
		{"PSS per worker", bytesOrEmpty(b.MeanPSS), bytesOrEmpty(c.MeanPSS), diff(float64(b.MeanPSS), float64(c.MeanPSS))},
		{"USS per worker", bytesOrEmpty(b.MeanUSS), bytesOrEmpty(c.MeanUSS), diff(float64(b.MeanUSS), float64(c.MeanUSS))},
	}
	oc := func(v profile.VariantResult) string {
		if v.Opcache == nil || !v.Opcache.Enabled {
			return "off"
		}
		return fmt.Sprintf("%s used, %d scripts, hit rate %.1f%%", bytesLabel(float64(v.Opcache.MemoryUsed)), v.Opcache.CachedScripts, v.Opcache.HitRate)
	}
	rows = append(rows, profileRow{"opcache", oc(b), oc(c), ""})
	hp := func(v profile.VariantResult) string {
		if v.HugePages == nil {
			return ""
		}
		return fmt.Sprintf("text %s of %s on huge pages", bytesLabel(float64(v.HugePages.TextHugeBytes)), bytesLabel(float64(v.HugePages.TextBytes)))
	}
	rows = append(rows, profileRow{"huge pages", hp(b), hp(c), ""})
	if b.Error != "" || c.Error != "" {
		rows = append(rows, profileRow{"error", b.Error, c.Error, ""})
	}
	names := map[string]bool{}
	for n := range b.Syscalls {
		names[n] = true
	}
	for n := range c.Syscalls {
		names[n] = true
	}
	var sys []syscallRow
	for n := range names {
		sys = append(sys, syscallRow{n, b.Syscalls[n], c.Syscalls[n]})
	}
	sort.Slice(sys, func(i, j int) bool {
		di, dj := math.Abs(sys[i].Rec-sys[i].Base), math.Abs(sys[j].Rec-sys[j].Base)
		if di != dj {
			return di > dj
		}
		return sys[i].Name < sys[j].Name
	})
	if len(sys) > 12 {
		sys = sys[:12]
	}
	return rows, sys
}
