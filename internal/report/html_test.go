package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/compare"
	"github.com/phptune/phptune/internal/experiment"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/tune"
)

// testdata/tune-result.json is a real run's output (phptune tune --budget 3m on the demo app, on a 2-CPU
// machine), with the configuration files it wrote; testdata/bench-result.json likewise from phptune bench.

func recordedTune(t testing.TB) *tune.Result { return recordedTuneFile(t, "testdata/tune-result.json") }

// recordedTuneFile is the tune result recorded in the file at path.
func recordedTuneFile(t testing.TB, path string) *tune.Result {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r tune.Result
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

func recordedFiles(t testing.TB) map[string]string {
	t.Helper()
	files := map[string]string{}
	for _, n := range []string{"php-fpm-pool.conf", "php.ini", "nginx-upstream.conf"} {
		b, err := os.ReadFile(filepath.Join("testdata", n))
		if err != nil {
			t.Fatal(err)
		}
		files[n] = string(b)
	}
	return files
}

func recordedBench(t *testing.T) *load.Result {
	t.Helper()
	r, err := load.ReadResult("testdata/bench-result.json")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func writeTuneHTML(t *testing.T, path string, r *tune.Result, files map[string]string) {
	t.Helper()
	var b bytes.Buffer
	if err := TuneHTML(&b, r, files); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// partialOf is the recorded run as if interrupted during the opcache comparison: no headline, no files.
func partialOf(r *tune.Result) *tune.Result {
	p := *r
	p.Partial, p.Headline, p.Files, p.Recommendation = true, nil, nil, r.Baseline
	p.Knobs = r.Knobs[:1]
	p.Comparisons = nil
	for _, c := range r.Comparisons {
		if c.Knob == "max_children" {
			p.Comparisons = append(p.Comparisons, c)
		}
	}
	p.Trials = nil
	for _, tr := range r.Trials {
		if tr.Phase == "saturation" || tr.Phase == "knob max_children" {
			p.Trials = append(p.Trials, tr)
		}
	}
	return &p
}

// expectedMarks counts, from the result alone, the data marks each chart must show: a point per saturation
// concurrency, an estimate per comparison made, four percentiles per configuration measured after the sweep,
// a memory bar per configuration (the sweep's pool apart) whose workers were measured.
func expectedMarks(r *tune.Result) map[string]int {
	want := map[string]int{}
	if r.Saturation != nil && len(r.Saturation.Points) > 0 {
		want["saturation"] = len(r.Saturation.Points)
	}
	for _, c := range r.Comparisons {
		// An interval still at the engine's bound (a thousandfold) has nothing to draw.
		if s := c.Stats; s.N > 1 && math.Abs(s.LogLo) < experiment.Unbounded-1e-9 && math.Abs(s.LogHi) < experiment.Unbounded-1e-9 {
			want["effects"]++
		}
	}
	lat, mem := map[string]bool{}, map[string]bool{}
	for _, tr := range r.Trials {
		// A latency row a configuration and load of throughput trials.
		if tr.Phase != "saturation" && tr.Metric != tune.MetricCPU && tr.Requests > 0 {
			lat[fmt.Sprint(tr.Config, tr.Concurrency)] = true
		}
		if tr.WorkerUSS > 0 {
			mem[fmt.Sprint(tr.Phase == "saturation", tr.Config)] = true
		}
	}
	if len(lat) > 0 {
		want["latency"] = 4 * len(lat)
	}
	if len(mem) > 0 {
		want["memory"] = len(mem)
	}
	if r.Soak != nil {
		for _, s := range r.Soak.Series {
			want["soak"] += len(s.Points)
		}
	}
	return want
}

func expectedBenchMarks(r *load.Result) map[string]int {
	want := map[string]int{}
	if h := r.Histogram(); h != nil {
		for _, q := range benchQuantiles {
			if float64(h.TotalCount())*(100-q)/100 >= 1 {
				want["latency-distribution"]++
			}
		}
	}
	if len(r.Trials) > 1 {
		want["trials"] = len(r.Trials)
	}
	return want
}

var marksAttr = regexp.MustCompile(`data-chart="([a-z-]+)" data-marks="(\d+)"`)

func declaredMarks(html string) map[string]int {
	got := map[string]int{}
	for _, m := range marksAttr.FindAllStringSubmatch(html, -1) {
		var n int
		fmt.Sscan(m[2], &n)
		got[m[1]] = n
	}
	return got
}

func sameCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestTuneHTMLFromRecordedRun(t *testing.T) {
	r := recordedTune(t)
	var b bytes.Buffer
	if err := TuneHTML(&b, r, recordedFiles(t)); err != nil {
		t.Fatal(err)
	}
	page := html.UnescapeString(b.String())
	h := r.Headline
	// The headline first: the recommendation's change against Debian's defaults, with its interval at the
	// level it was decided at.
	head := changeHTML(100*h.VsDebian.Estimate) + "</div>\n<div class=\"label\">req/s against Debian's defaults"
	if i := strings.Index(page, head); i < 0 || i > strings.Index(page, `id="settings"`) {
		t.Errorf("headline %q missing or not first", head)
	}
	if ci := fmt.Sprintf("interval [%s, %s]", changeHTML(100*h.VsDebian.Lo), changeHTML(100*h.VsDebian.Hi)); !strings.Contains(page, ci) {
		t.Errorf("headline CI %q missing", ci)
	}
	// Every knob a row (TestRowsReadRight reads them).
	if rows := readHTMLRows(t, b.String()); len(rows) != len(r.Knobs) {
		t.Errorf("%d rows in the settings table, %d knobs", len(rows), len(r.Knobs))
	}
	// The config files, whole, escaped.
	for name, text := range recordedFiles(t) {
		if !strings.Contains(page, text) {
			t.Errorf("file %s not shown whole", name)
		}
	}
	if got, want := declaredMarks(page), expectedMarks(r); !sameCounts(got, want) {
		t.Errorf("charts' marks %v, want %v", got, want)
	}
	for _, s := range []string{r.Environment.PHP, r.Environment.Host.Kernel, "All " + fmt.Sprint(len(r.Trials)) + " trials"} {
		if !strings.Contains(page, s) {
			t.Errorf("page lacks %q", s)
		}
	}
	// Self-contained: nothing loaded from anywhere (the SVG namespace is a name, not a load).
	if m := regexp.MustCompile(`(?i)(src|href)\s*=|<link|@import|url\(`).FindString(page); m != "" {
		t.Errorf("page refers to an outside resource: %q", m)
	}
	if strings.Contains(page, "Partial result") {
		t.Error("a complete run is called partial")
	}
}

func TestTuneHTMLPartialAndEmpty(t *testing.T) {
	p := partialOf(recordedTune(t))
	var b bytes.Buffer
	if err := TuneHTML(&b, p, nil); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{"Partial result", "No headline", "a partial run writes no configuration files"} {
		if !strings.Contains(page, want) {
			t.Errorf("partial page lacks %q", want)
		}
	}
	if got, want := declaredMarks(page), expectedMarks(p); !sameCounts(got, want) {
		t.Errorf("partial charts' marks %v, want %v", got, want)
	}
	// Nothing at all measured (a run stopped at once): the page still renders, without charts.
	b.Reset()
	if err := TuneHTML(&b, &tune.Result{Schema: tune.Schema, App: "x", Partial: true}, nil); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "<svg") {
		t.Error("an empty result drew a chart")
	}
}

func TestTuneHTMLEscapes(t *testing.T) {
	r := recordedTune(t)
	r.App = `<script>alert("app")</script>`
	r.Warnings = append(r.Warnings, `<img src=x onerror=alert(1)>`)
	r.Trials[0].Config = `pm=static" onmouseover="alert(1)`
	var b bytes.Buffer
	if err := TuneHTML(&b, r, map[string]string{"php.ini": "x = </pre><script>alert(2)</script>"}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, bad := range []string{`<script>alert`, `<img src=x`, `" onmouseover="`, `</pre><script>`} {
		if strings.Contains(page, bad) {
			t.Errorf("unescaped %q in the page", bad)
		}
	}
	if !strings.Contains(page, "&lt;script&gt;alert(&#34;app&#34;)&lt;/script&gt;") {
		t.Error("app name not shown escaped")
	}
}

func TestBenchHTMLFromRecordedRun(t *testing.T) {
	r := recordedBench(t)
	var b bytes.Buffer
	if err := BenchHTML(&b, r); err != nil {
		t.Fatal(err)
	}
	page := html.UnescapeString(b.String())
	if got, want := declaredMarks(page), expectedBenchMarks(r); !sameCounts(got, want) || want["latency-distribution"] < 5 {
		t.Errorf("charts' marks %v, want %v", got, want)
	}
	for _, tr := range r.Trials {
		if !strings.Contains(page, fmt.Sprintf(`<tr><td class="num">%d</td><td class="num">%s</td>`, tr.Index, rate(tr.RPS))) {
			t.Errorf("trial %d missing from the table", tr.Index)
		}
	}
	if !strings.Contains(page, msLabel(r.Latency.P99)) {
		t.Errorf("p99 %s not shown", msLabel(r.Latency.P99))
	}
}

func TestCompareHTML(t *testing.T) {
	a := recordedTune(t)
	var b2 tune.Result
	data, err := os.ReadFile("testdata/tune-result-2.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &b2); err != nil {
		t.Fatal(err)
	}
	tr, err := compare.Tunes([]*tune.Result{a, &b2}, []string{"A", "B"}, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := CompareTunesHTML(&b, tr); err != nil {
		t.Fatal(err)
	}
	page := html.UnescapeString(b.String())
	if got, want := declaredMarks(page)["compare"], statsRows(tr.Throughput); got != want || want == 0 {
		t.Errorf("compare chart has %d marks, want %d", got, want)
	}
	for _, k := range tr.Knobs {
		if !strings.Contains(page, "<td><b>"+k.Name+"</b></td>") {
			t.Errorf("knob %s missing", k.Name)
		}
	}
	// Each run's cell is about the value it kept: both kept opcache on, off shown worse than it.
	if n := strings.Count(page, `<span class="mono">on</span>
<span class="badge better">better than off</span>`); n != 2 {
		t.Errorf("opcache on reads better than off in %d runs, want 2", n)
	}
	if strings.Contains(page, "off vs on") {
		t.Error("a cell states the rejected value's comparison")
	}
	if strings.Contains(page, "agree on every knob") == !tr.Agree {
		t.Errorf("the page's agreement does not match the report's (%v)", tr.Agree)
	}

	// A bench comparison.
	br := recordedBench(t)
	rep, err := compare.Results([]*load.Result{br, br}, []string{"A", "B"}, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	b.Reset()
	if err := CompareHTML(&b, rep); err != nil {
		t.Fatal(err)
	}
	if got, want := declaredMarks(b.String())["compare"], statsRows(rep); got != want || want == 0 {
		t.Errorf("bench compare chart has %d marks, want %d", got, want)
	}
}

// statsRows counts the compared metrics that have statistics: one chart mark each.
func statsRows(r *compare.Report) int {
	n := 0
	for _, a := range r.Arms {
		for _, row := range a.Rows {
			if row.Stats != nil {
				n++
			}
		}
	}
	return n
}

// BenchmarkTuneHTML renders the recorded run's page (190 trials): its time and the page's size.
func BenchmarkTuneHTML(b *testing.B) {
	r, files := recordedTune(b), recordedFiles(b)
	var buf bytes.Buffer
	for i := 0; i < b.N; i++ {
		buf.Reset()
		if err := TuneHTML(&buf, r, files); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(buf.Len()), "page-bytes")
}

// Degenerate figures (one point, zero throughput, an empty interval, no memory budget) draw without NaN or
// Inf in the SVG.
func TestTuneHTMLDegenerate(t *testing.T) {
	r := recordedTune(t)
	r.Saturation.Knee, r.Saturation.Peak, r.Plan.Concurrency = 0, 0, 0 // the sweep interrupted
	r.Saturation.Points = r.Saturation.Points[:1]
	r.Saturation.Points[0].RPS, r.Saturation.Points[0].Lo, r.Saturation.Points[0].Hi = 0, 0, 0
	r.Comparisons = r.Comparisons[:1]
	r.Comparisons[0].Stats.Estimate, r.Comparisons[0].Stats.Lo, r.Comparisons[0].Stats.Hi = 0, 0, 0
	ps := *r.PoolSize
	ps.Memory, ps.Chosen = 0, 0
	r.PoolSize = &ps
	r.Trials = r.Trials[:1]
	var b bytes.Buffer
	if err := TuneHTML(&b, r, nil); err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`(?i)\b(NaN|[+-]?Inf)\b|knee: 0|\b0 connections`).FindString(b.String()); m != "" {
		t.Errorf("page has %q", m)
	}
	if got, want := declaredMarks(b.String()), expectedMarks(r); !sameCounts(got, want) {
		t.Errorf("marks %v, want %v", got, want)
	}
}

// A latency goal's checks and the pool's note are shown.
func TestTuneHTMLLatencyGoal(t *testing.T) {
	r := recordedTune(t)
	ps := *r.PoolSize
	ps.Note = "memory limits the pool below the CPU knee"
	ps.P99Checks = []tune.P99Check{{MaxChildren: 4, Rate: 200, GoalUs: 50000, P99Us: 81000}, {MaxChildren: 6, Rate: 200, GoalUs: 50000, P99Us: 42000, Met: true}}
	r.PoolSize = &ps
	r.P99Check = &tune.P99Check{MaxChildren: 6, Rate: 200, GoalUs: 50000, P99Us: 45000, Met: true}
	var b bytes.Buffer
	if err := TuneHTML(&b, r, nil); err != nil {
		t.Fatal(err)
	}
	page := html.UnescapeString(b.String())
	for _, want := range []string{"(memory limits the pool below the CPU knee)", "4 workers, p99 81ms at 200 req/s (goal 50ms) <span class=\"badge worse\">not met",
		"6 workers, p99 42ms at 200 req/s (goal 50ms) <span class=\"badge better\">met", "Latency goal: p99 45ms at 200 req/s"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}
