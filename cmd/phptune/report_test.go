package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"

	"github.com/phptune/phptune/internal/cli"
	"github.com/phptune/phptune/internal/tune"
)

// Recorded real outputs of phptune tune and bench (see internal/report/testdata).
const reportTestdata = "../../internal/report/testdata"

// copyRun copies a recorded tune result into a fresh run dir, with its configuration files.
func copyRun(t *testing.T, result string, withFiles bool) string {
	t.Helper()
	dir := t.TempDir()
	names := []string{result}
	if withFiles {
		names = append(names, "php-fpm-pool.conf", "php.ini", "nginx-upstream.conf")
	}
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(reportTestdata, n))
		if err != nil {
			t.Fatal(err)
		}
		dst := n
		if n == result {
			dst = "result.json"
		}
		if err := os.WriteFile(filepath.Join(dir, dst), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "result.json")
}

func readTuneFile(t *testing.T, path string) *tune.Result {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r tune.Result
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

// marks reads each chart's declared data marks from a page.
func marks(page string) map[string]int {
	m := map[string]int{}
	for _, s := range regexp.MustCompile(`data-chart="([a-z-]+)" data-marks="(\d+)"`).FindAllStringSubmatch(page, -1) {
		n, _ := strconv.Atoi(s[2])
		m[s[1]] = n
	}
	return m
}

func oneLineError(t *testing.T, r runOut, want string) {
	t.Helper()
	if r.code != 2 {
		t.Errorf("exit %d, want 2; stderr %q", r.code, r.stderr)
	}
	if lines := strings.Split(strings.TrimSpace(r.stderr), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], "phptune: ") || !strings.Contains(lines[0], want) {
		t.Errorf("stderr %q: want one line \"phptune: ...%s...\"", r.stderr, want)
	}
}

func TestReportRerendersTuneAndBench(t *testing.T) {
	res := copyRun(t, "tune-result.json", true)
	r := phptune(t, "report", res)
	if r.code != 0 {
		t.Fatalf("report: exit %d: %s", r.code, r.stderr)
	}
	out := filepath.Join(filepath.Dir(res), "report.html")
	if !strings.Contains(r.stdout, out) {
		t.Errorf("report printed %q, want the path %s", r.stdout, out)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	tr := readTuneFile(t, res)
	if got := marks(page)["saturation"]; got != len(tr.Saturation.Points) {
		t.Errorf("saturation chart has %d marks, want %d", got, len(tr.Saturation.Points))
	}
	for _, k := range tr.Knobs {
		if !strings.Contains(page, "<td><b>"+k.Name+"</b></td>") {
			t.Errorf("report lacks knob %s", k.Name)
		}
	}
	// The configuration files beside the JSON are in the page.
	if !strings.Contains(page, "pm.max_children = "+strconv.Itoa(tr.Recommendation.MaxChildren)) {
		t.Error("report lacks php-fpm-pool.conf's content")
	}
	entries, _ := os.ReadDir(filepath.Dir(res))
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".phptune-") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}

	// --out, and a bench result.
	bench := filepath.Join(t.TempDir(), "b.html")
	if r := phptune(t, "report", filepath.Join(reportTestdata, "bench-result.json"), "--out", bench); r.code != 0 {
		t.Fatalf("report bench: exit %d: %s", r.code, r.stderr)
	}
	if b, err := os.ReadFile(bench); err != nil || marks(string(b))["latency-distribution"] == 0 {
		t.Errorf("bench page: %v, marks %v", err, marks(string(b)))
	}
}

func TestReportBadInput(t *testing.T) {
	dir := t.TempDir()
	notJSON := filepath.Join(dir, "php.ini")
	os.WriteFile(notJSON, []byte("; not json\nx = 1\n"), 0o644)
	serve := filepath.Join(dir, "serve.json")
	os.WriteFile(serve, []byte(`{"schema": "phptune/serve/v1"}`), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"report", filepath.Join(dir, "missing.json")}, "no such file"},
		{[]string{"report", notJSON}, "not a phptune result"},
		{[]string{"report", serve}, `schema "phptune/serve/v1" is not one phptune report renders`},
		{[]string{"report"}, "missing RESULT.json"},
	} {
		oneLineError(t, phptune(t, c.args...), c.want)
	}
	if _, err := os.Stat(filepath.Join(dir, "report.html")); err == nil {
		t.Error("a refused input wrote report.html")
	}
}

func TestCompareTuneResults(t *testing.T) {
	a, b := copyRun(t, "tune-result.json", false), copyRun(t, "tune-result-2.json", false)
	ra, rb := readTuneFile(t, a), readTuneFile(t, b)
	r := phptune(t, "compare", a, b, "--json")
	if r.code != 0 {
		t.Fatalf("compare: exit %d: %s", r.code, r.stderr)
	}
	var rep struct {
		Schema string `json:"schema"`
		Agree  bool   `json:"agree"`
		Knobs  []struct {
			Name   string   `json:"name"`
			Values []string `json:"values"`
			Agree  bool     `json:"agree"`
		} `json:"knobs"`
		Throughput struct {
			Paired bool `json:"paired"`
			Arms   []struct {
				Trials int `json:"trials"`
				Rows   []struct {
					Metric string `json:"metric"`
					Stats  *struct {
						Paired bool `json:"paired"`
					} `json:"stats"`
					Verdict string `json:"verdict"`
				} `json:"rows"`
			} `json:"arms"`
		} `json:"throughput"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("compare --json: %v\n%s", err, r.stdout)
	}
	if rep.Schema != "phptune/compare-tune/v1" {
		t.Errorf("schema %q", rep.Schema)
	}
	// Knob by knob, from the two results themselves.
	values := func(r *tune.Result) map[string]string {
		m := map[string]string{}
		for _, k := range r.Knobs {
			m[k.Name] = k.Value
		}
		return m
	}
	va, vb := values(ra), values(rb)
	agree := true
	if len(rep.Knobs) != len(ra.Knobs) {
		t.Errorf("%d knobs compared, want %d", len(rep.Knobs), len(ra.Knobs))
	}
	for _, k := range rep.Knobs {
		want := va[k.Name] == vb[k.Name]
		agree = agree && want
		if k.Agree != want || k.Values[0] != va[k.Name] || k.Values[1] != vb[k.Name] {
			t.Errorf("knob %s: values %v agree %v; the results hold %q and %q", k.Name, k.Values, k.Agree, va[k.Name], vb[k.Name])
		}
	}
	if rep.Agree != agree {
		t.Errorf("agree %v, want %v", rep.Agree, agree)
	}
	// The recommendations' throughput from each run's final trials of it, unpaired.
	final := func(r *tune.Result) int {
		n := 0
		for _, tr := range r.Trials {
			if tr.Phase == "final" && tr.Config == r.Recommendation.String() {
				n++
			}
		}
		return n
	}
	if len(rep.Throughput.Arms) != 2 || rep.Throughput.Arms[0].Trials != final(ra) || rep.Throughput.Arms[1].Trials != final(rb) {
		t.Fatalf("throughput arms %+v, want %d and %d final trials", rep.Throughput.Arms, final(ra), final(rb))
	}
	row := rep.Throughput.Arms[1].Rows[0]
	if rep.Throughput.Paired || row.Metric != "rps" || row.Stats == nil || row.Stats.Paired || row.Verdict == "" {
		t.Errorf("throughput: paired %v, first row %+v: want an unpaired verdict on rps", rep.Throughput.Paired, row)
	}

	// The human summary: a row a knob with both values and the agreement.
	r = phptune(t, "compare", a, b)
	if r.code != 0 {
		t.Fatalf("compare: exit %d: %s", r.code, r.stderr)
	}
	for _, k := range ra.Knobs {
		if !regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(k.Name) + `\s+\S+ \(.*\s(yes|NO)`).MatchString(r.stdout) {
			t.Errorf("summary lacks a row for %s:\n%s", k.Name, r.stdout)
		}
	}
	if !strings.Contains(r.stdout, "req/s") || !strings.Contains(r.stdout, "independent samples") {
		t.Errorf("summary lacks the throughput comparison:\n%s", r.stdout)
	}

	// --out keeps compare.json, which phptune report renders.
	out := t.TempDir()
	if r := phptune(t, "compare", a, b, "--out", out); r.code != 0 {
		t.Fatalf("compare --out: exit %d: %s", r.code, r.stderr)
	}
	if r := phptune(t, "report", filepath.Join(out, "compare.json")); r.code != 0 {
		t.Fatalf("report compare.json: exit %d: %s", r.code, r.stderr)
	}
	// One mark per compared metric with statistics, as compare.json holds them.
	saved, err := os.ReadFile(filepath.Join(out, "compare.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cj struct {
		Throughput struct {
			Arms []struct {
				Rows []struct {
					Stats *json.RawMessage `json:"stats"`
				} `json:"rows"`
			} `json:"arms"`
		} `json:"throughput"`
	}
	if err := json.Unmarshal(saved, &cj); err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, a := range cj.Throughput.Arms {
		for _, row := range a.Rows {
			if row.Stats != nil {
				want++
			}
		}
	}
	page, err := os.ReadFile(filepath.Join(out, "report.html"))
	if err != nil || want == 0 || marks(string(page))["compare"] != want || !strings.Contains(string(page), "Knob by knob") {
		t.Errorf("compare page: %v, marks %v, want %d", err, marks(string(page)), want)
	}

	// A tune result is compared only with tune results.
	oneLineError(t, phptune(t, "compare", a, filepath.Join(reportTestdata, "bench-result.json")), "tune results are compared only with tune results")
}

// An interrupted tune still writes report.html beside its partial result.json.
func TestTuneWritesReportWhenInterrupted(t *testing.T) {
	// A run interrupted before its first trial keeps nothing (there is nothing to report): SIGINT once the
	// saturation sweep's first point is measured. --no-screen: the trials start at once, without the counting
	// that screening does first.
	out := t.TempDir()
	w := startWatched(t, nil, "tune", "--budget", "5m", "--no-screen", "--out", out)
	w.until(t, "the sweep's first point measured", func() bool { return pastFirst(w.se.String(), "saturation:") })
	if code, _ := w.stop(t, syscall.SIGINT); code != 130 {
		t.Fatalf("tune after SIGINT: exit %d, want 130; %s %s", code, w.so.String(), w.se.String())
	}
	res := readTuneFile(t, filepath.Join(out, "result.json"))
	b, err := os.ReadFile(filepath.Join(out, "report.html"))
	if err != nil {
		t.Fatalf("no report.html after an interrupted run: %v", err)
	}
	page := string(b)
	if !res.Partial || !strings.Contains(page, "Partial result") {
		t.Errorf("partial %v; the page does not say it is partial", res.Partial)
	}
	want := 0
	if res.Saturation != nil {
		want = len(res.Saturation.Points)
	}
	if got := marks(page)["saturation"]; got != want {
		t.Errorf("saturation chart has %d marks, the partial result %d points", got, want)
	}
	if !strings.Contains(w.so.String(), "report.html") {
		t.Errorf("the summary does not name report.html:\n%s", w.so.String())
	}
	progressLinesRead(t, w.se.String())
}

// progressLinesRead checks tune's progress lines as a person reads them: each within 120 columns, ending with the
// best so far in knob words (the starting configuration, before any knob is decided), never a command line.
func progressLinesRead(t *testing.T, stderr string) {
	t.Helper()
	n := 0
	for _, l := range strings.Split(stderr, "\n") {
		if !strings.HasPrefix(l, "tune: ") {
			continue
		}
		n++
		if c := utf8.RuneCountInString(l); c > cli.Width {
			t.Errorf("a progress line of %d columns: %s", c, l)
		}
		_, best, ok := strings.Cut(l, "  best so far: ")
		if !ok || strings.Contains(best, "-d ") || strings.Contains(best, "=") {
			t.Errorf("a progress line without the best so far in knob words: %s", l)
		}
	}
	if n == 0 {
		t.Errorf("no progress line:\n%s", stderr)
	}
}
