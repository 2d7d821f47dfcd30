package report

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/apply"
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
	"mshort":  func(m string) string { short, _ := metricWords(m); return short },
	"vclass":  verdictClass,
	"secs":    secs,
	"wsecs":   wholeSecs,
	"unset":   orUnset,
	"vs":      func(name, compared string) string { return strings.ReplaceAll(compared, name+"=", "") },
	"cpu":     func(m map[string]float64, k string) string { return cpuCell(m[k]) },
	"change":  changeHTML,
	"cfg":     shownConfig,
}).ParseFS(htmlFS, "html/*.tmpl"))

// tunePage is what the tune template renders: the result and the model every renderer prints (rows,
// configurations, headline).
type tunePage struct {
	R        *tune.Result
	Title    string
	Hero     []heroCard
	Lede     string
	Charts   []*chart
	Lines    []knobLine
	Legend   []string // what the settings' columns, metrics and intervals mean
	Configs  []configRow
	Capacity bool // some configuration has requests per server CPU-second: its column, the headline's figures' cells
	Head     *headlineModel
	Files    []configFile
	Apply    *applyView
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
	Big, Label, CI string
	// Figures are the two medians the change is between, each with its row in the configurations table.
	Figures []heroFigure
	Sub     string
	Verdict stats.Verdict
	Main    bool
}

// heroFigure is a headline figure and the configurations table's row and column it is taken from.
type heroFigure struct{ Text, Row, Metric string }

type configFile struct{ Name, Text string }

// applyView is the plan's steps and diffs as the page shows them.
type applyView struct {
	Servers string
	Steps   []apply.Step
	Patch   string
	Undo    string
	Notes   []string
	Diffs   []fileDiff
}

// fileDiff is one file's diff against the start, a line at a time, each with its class (add, del, hunk).
type fileDiff struct {
	Name, Dest, From string
	Lines            []diffLine
}

type diffLine struct{ Class, Text string }

func viewApply(p *apply.Plan, dir string) *applyView {
	v := &applyView{Servers: p.ForServers(), Steps: p.Steps(dir), Patch: p.Patch(dir), Undo: p.Undo(dir), Notes: p.Notes}
	for _, f := range p.Files {
		d := fileDiff{Name: f.Name, Dest: f.Dest, From: f.From}
		for _, l := range strings.SplitAfter(strings.TrimSuffix(f.Diff, "\n"), "\n") {
			class := ""
			switch {
			case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
				class = "head"
			case strings.HasPrefix(l, "@@"):
				class = "hunk"
			case strings.HasPrefix(l, "+"):
				class = "add"
			case strings.HasPrefix(l, "-"):
				class = "del"
			}
			d.Lines = append(d.Lines, diffLine{class, l})
		}
		v.Diffs = append(v.Diffs, d)
	}
	return v
}

// TuneHTML writes report.html for a tune result. files are the recommended configuration files by name
// (php-fpm-pool.conf, php.ini, nginx-upstream.conf) with their contents; a partial run has none. Sections
// whose data the result lacks are left out.
func TuneHTML(w io.Writer, r *tune.Result, files map[string]string) error {
	a := AnswerOf(r)
	p := tunePage{R: r, Title: "phptune tune: " + r.App, Lines: a.Knobs, Configs: a.Configs, Head: a.Headline}
	p.Legend = legend(a)
	for _, c := range a.Configs {
		p.Capacity = p.Capacity || c.Capacity > 0
	}
	if p.Head != nil {
		p.Legend = append(p.Legend, finalNote)
	}
	p.Hero = hero(p.Head)
	p.Lede = lede(p.Head)
	for _, c := range []*chart{saturationChart(a.Sweep), effectsChart(r), latencyChart(p.Configs, r.Plan.Concurrency), memoryChart(memRows(r), r.PoolSize),
		soakChart(r.Soak)} {
		if c != nil {
			p.Charts = append(p.Charts, c)
		}
	}
	captions := map[string]string{}
	if s := a.Sweep; s != nil {
		text := fmt.Sprintf("Closed-loop load on a static pool of %d workers, %d trials a point (the line joins their %ss, as the "+
			"peak is judged on them; whiskers are the 95%% intervals of their means). ", s.Pool, s.Trials, s.figureWord())
		k := kneeText(s, r.Plan)
		text += strings.ToUpper(k[:1]) + k[1:] + "."
		if s.Knee > 0 {
			text += " The pool size starts from there."
		}
		captions["saturation"] = text
	}
	captions["effects"] = effectsCaption(r)
	captions["latency"] = latencyCaption(p.Configs, r.Plan.Concurrency)
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
	known := []string{apply.PoolName, apply.ININame, apply.NginxName}
	var extra []string
	for name := range files {
		// How to apply them and their diffs are shown as steps and diffs, not as files.
		if !slices.Contains(known, name) && name != apply.DiffName && name != "apply.txt" {
			extra = append(extra, name)
		}
	}
	sort.Strings(extra)
	for _, name := range append(known, extra...) {
		if t, ok := files[name]; ok {
			p.Files = append(p.Files, configFile{name, t})
		}
	}
	if r.Apply != nil && len(p.Files) > 0 {
		p.Apply = viewApply(r.Apply, filepath.Dir(r.Files[apply.PoolName]))
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
		{"memory used", memoryText(a.Memory)},
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
			{"decisions", decisionsText(r.Plan, a)},
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

// decisionsText says how the run decided, in the summary's words: the method's name (result.json's plan.method)
// is the docs' to explain, not the page's.
func decisionsText(p tune.Plan, a *Answer) string {
	s := fmt.Sprintf("each knob a race of its values in interleaved rounds, until one was decided or its share of the "+
		"budget ran out; %d experiments planned%s; a difference under %.3g%% counts as none.", p.Experiments,
		atConns(p.Concurrency), 100*p.MinEffect)
	if p.PoolMargin > 0 {
		s += fmt.Sprintf(" The pool size is the smallest shown to serve within %.3g%% of the best size's requests/s.", 100*p.PoolMargin)
	}
	if l := levelSentence(a); l != "" {
		s += " " + l
	}
	return s
}

// effectsCaption says how the comparisons in the effects chart were decided and which way they read.
func effectsCaption(r *tune.Result) string {
	if r.Plan.Method == "" {
		return "Every comparison the run made, in order, with its estimate and confidence interval."
	}
	return fmt.Sprintf("Every value each knob raced, in order: the change of the first value named against the second, the value kept "+
		"named first wherever it was one of the two, so that a positive change reads \"the kept value is better\" as in the table (in "+
		"requests per CPU-second of php-fpm for CPU-only knobs, in requests/s served otherwise), with its interval. Each knob's values ran "+
		"in the same interleaved rounds until one was shown better by at least %.3g%%, the rest shown worse or within %.3g%% (no "+
		"difference), or the knob's share of the budget ran out (inconclusive).", 100*r.Plan.MinEffect, 100*r.Plan.MinEffect)
}

// hero is the headline's cards: the recommendation against the starting point and the rule of thumb, in each
// metric the final compared, with the table's figures.
func hero(h *headlineModel) []heroCard {
	if h == nil {
		return nil
	}
	var cards []heroCard
	switch {
	case h.SameBut != "":
		cards = append(cards, heroCard{Main: true, Big: "memory only", Label: "the recommendation is " + h.Baseline + " but for " + h.SameBut,
			Sub: "it bounds a worker's memory over hours and cannot act within a run, so it was not raced"})
	case h.Same:
		cards = append(cards, heroCard{Main: true, Big: "no change", Label: "the recommendation is " + h.Baseline,
			Sub: "no knob was shown better than its starting value, so it was not raced against itself"})
	}
	for i, f := range h.Figures {
		short, _ := metricWords(f.Metric)
		fig := func(row configRow, v float64) heroFigure {
			return heroFigure{Text: rate(v), Row: rowKey(row), Metric: short}
		}
		for _, x := range []struct {
			name string
			row  configRow
			v    float64
			c    *versus
			sub  string
		}{{h.Baseline, h.Base, f.Base, f.VsBase, ""}, {"the rule of thumb", h.Rule, f.Rule, f.VsRule, shownConfig(h.Rule.Config)}} {
			c := x.c
			if c == nil {
				continue
			}
			sub := x.sub
			if sub == "" {
				sub = fmt.Sprintf("medians of %d interleaved rounds%s", c.Rounds, atConns(h.Load))
			}
			if c.RoundsNote != "" {
				sub += "; " + c.RoundsNote
			}
			if c.Need != "" {
				sub += "; deciding it would need " + c.Need
			}
			cards = append(cards, heroCard{Main: i == 0 && x.name == h.Baseline, Big: changeHTML(c.Change.Est), Label: short + " against " + x.name,
				CI: "interval " + intervalHTML(&c.Change), Verdict: c.Verdict, Figures: []heroFigure{fig(h.Rec, f.Rec), fig(x.row, x.v)}, Sub: sub})
		}
	}
	if t := h.Tail; t != nil {
		cards = append(cards, tailCard(h, t))
	}
	return cards
}

// rowKey names a configuration row for the page's cross-references: its name and load.
func rowKey(c configRow) string { return fmt.Sprintf("%s @ %d", c.Name, c.Load) }

// lede says the headline in a sentence, in words that do not claim more than the verdict.
func lede(h *headlineModel) string {
	if h != nil && h.SameBut != "" {
		return fmt.Sprintf("The recommendation is %s but for %s, which bounds a worker's memory over hours: it cannot change "+
			"throughput within a run, so it was not raced. Apply it as below.", h.Baseline, h.SameBut)
	}
	if h != nil && h.Same {
		return fmt.Sprintf("The recommendation is %s: no knob was shown better than its starting value, so there is nothing to change.", h.Baseline)
	}
	if h == nil || len(h.Figures) == 0 || h.Figures[0].VsBase == nil {
		return ""
	}
	c, base := h.Figures[0].VsBase, h.Baseline
	ci := "(interval " + intervalHTML(&c.Change) + ")"
	est := changeHTML(c.Change.Est)
	switch c.Verdict {
	case stats.Better:
		return fmt.Sprintf("The recommendation serves %s more requests/s than %s %s.", strings.TrimPrefix(est, "+"), base, ci)
	case stats.Worse:
		return fmt.Sprintf("The recommendation serves %s fewer requests/s than %s %s: keep yours.", strings.TrimPrefix(est, "−"), base, ci)
	case stats.Inconclusive:
		return fmt.Sprintf("The budget ended before the recommendation's throughput against %s was decided: %s requests/s %s. The settings below say which knobs mattered.", base, est, ci)
	}
	return fmt.Sprintf("No difference in throughput from %s was shown: %s requests/s %s. The settings below say which knobs mattered.", base, est, ci)
}

// intervalHTML is an interval as the terminal states it (intervalText), with a typographic minus and infinity.
func intervalHTML(c *change) string {
	return strings.NewReplacer("-", "−", "inf", "∞").Replace(intervalText(c))
}

// changeHTML is a change in percent as the terminal states it (pctText), with a typographic minus and
// infinity.
func changeHTML(p float64) string {
	return strings.NewReplacer("-", "−", "inf", "∞").Replace(pctText(p))
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

// wholeSecs formats a run's length to the second.
func wholeSecs(s float64) string {
	return time.Duration(math.Round(s) * float64(time.Second)).String()
}

// atConns says at what load the comparisons ran, when the run got that far.
func atConns(n int) string {
	if n <= 0 {
		return ""
	}
	return fmt.Sprintf(" at %d connection%s", n, plural(n))
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
