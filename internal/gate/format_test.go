package gate

import (
	"encoding/xml"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/stats"
)

// sample is a run in which NEW is worse on the mix and on one URL, as every writer must show it.
func sample() *Result {
	return &Result{Schema: Schema, Old: Version{Label: "OLD", Dir: "old"}, New: Version{Label: "NEW", Dir: "new", Rev: "0123456789abcdef0123"},
		Outcome: Worse, MinEffect: 0.03, Alpha: 0.05, Rounds: 12, BudgetS: 120, ElapsedS: 118.4, Connections: 8,
		Comparisons: []Comparison{
			{Name: "mix", Verdict: stats.Worse, Gate: Worse, Change: 0.21, Lo: 0.15, Hi: 0.27, Level: 0.9875, OldUs: 800, NewUs: 968, Rounds: 12},
			{Name: "GET /slow.php?a=1|b,c:d", Verdict: stats.Worse, Gate: Worse, Change: 0.98, Lo: 0.9, Hi: 1.05, Level: 0.9875, OldUs: 1000, NewUs: 1980, Rounds: 5},
			{Name: "GET /", Verdict: stats.NoDifference, Gate: NotWorse, Change: 0.004, Lo: -0.012, Hi: 0.02, Level: 0.9875, OldUs: 500, NewUs: 502, Rounds: 12},
			{Name: "GET /search", Verdict: stats.Inconclusive, Gate: Undecided, Change: 0.02, Lo: -0.03, Hi: 0.07, Level: 0.9875, OldUs: 700, NewUs: 714, Rounds: 12, RoundsNeeded: 40},
		}}
}

func TestMarkdownShowsEveryComparison(t *testing.T) {
	var b strings.Builder
	if err := sample().WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{
		"### phptune gate: NEW is worse than OLD: mix (+21% CPU), GET /slow.php?a=1\\|b,c:d (+98% CPU)",
		"| **`GET /slow.php?a=1\\|b,c:d`** | 1000 | 1980 | **+98%** | [+90%, +105%] | **worse** | 5 |",
		"| `GET /` | 500 | 502 | +0.4% | [-1.2%, +2.0%] | no difference | 12 |",
		"undecided (about 28 more rounds)",
		"NEW (0123456789ab) against OLD (old)",
		"hold together at 95%",
		"(both versions at once, 8 connections each, as many as a page that waits needs)",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the Markdown has no %q:\n%s", want, md)
		}
	}
	// Every row of the table has the header's cells: an escaped bar is no separator.
	bars := func(l string) int { return strings.Count(l, "|") - strings.Count(l, `\|`) }
	var rows []string
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "|") {
			rows = append(rows, l)
		}
	}
	if len(rows) != 2+4 {
		t.Fatalf("%d table lines, want 6:\n%s", len(rows), md)
	}
	for _, l := range rows[1:] {
		if bars(l) != bars(rows[0]) {
			t.Errorf("row %q has %d cells' bars, the header %d", l, bars(l), bars(rows[0]))
		}
	}
}

func TestJUnitFailsWhatGotWorse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gate.xml")
	if err := sample().SaveJUnit(path); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := sample().WriteJUnit(&b); err != nil {
		t.Fatal(err)
	}
	if saved, err := os.ReadFile(path); err != nil || string(saved) != b.String() {
		t.Errorf("SaveJUnit wrote %q (%v), WriteJUnit %q", saved, err, b.String())
	}
	var doc junitSuites
	if err := xml.Unmarshal([]byte(b.String()), &doc); err != nil {
		t.Fatalf("not XML: %v\n%s", err, b.String())
	}
	if doc.Tests != 4 || doc.Failures != 2 || doc.Skipped != 1 || len(doc.Suites) != 1 || len(doc.Suites[0].Cases) != 4 {
		t.Fatalf("tests %d, failures %d, skipped %d; want 4, 2, 1:\n%s", doc.Tests, doc.Failures, doc.Skipped, b.String())
	}
	for _, c := range doc.Suites[0].Cases {
		failed, skipped := c.Failure != nil, c.Skipped != nil
		switch c.Name {
		case "mix", "GET /slow.php?a=1|b,c:d":
			if !failed || !strings.Contains(c.Failure.Message, "worse") {
				t.Errorf("%s: failure %+v, want one that says worse", c.Name, c.Failure)
			}
		case "GET /search":
			if !skipped || failed {
				t.Errorf("%s: undecided, want skipped", c.Name)
			}
		case "GET /":
			if failed || skipped || !strings.Contains(c.SystemOut, "no difference") {
				t.Errorf("%s: not worse, want it passed with its figures (%q)", c.Name, c.SystemOut)
			}
		default:
			t.Errorf("test case %q", c.Name)
		}
	}
}

func TestAnnotationsNameWhatGotWorse(t *testing.T) {
	var b strings.Builder
	if err := sample().WriteAnnotations(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d annotations, want 2 (mix and slow.php):\n%s", len(lines), b.String())
	}
	if want := "::error title=phptune gate%3A mix is slower::NEW costs +21%25 CPU a request against OLD, [+15%25, +27%25]"; !strings.HasPrefix(lines[0], want) {
		t.Errorf("annotation %q, want it to start %q", lines[0], want)
	}
	// A title's separators are escaped, or GitHub would cut it there; a message's percent signs too.
	if want := "::error title=phptune gate%3A GET /slow.php?a=1|b%2Cc%3Ad is slower::"; !strings.HasPrefix(lines[1], want) {
		t.Errorf("annotation %q, want it to start %q", lines[1], want)
	}
	r := sample()
	r.Outcome, r.Comparisons = Undecided, r.Comparisons[2:]
	b.Reset()
	r.WriteAnnotations(&b)
	if !strings.HasPrefix(b.String(), "::warning title=phptune gate%3A undecided::") || strings.Count(b.String(), "\n") != 1 {
		t.Errorf("undecided: %q, want one warning", b.String())
	}
	if got := ghData("100% sure\nreally"); got != "100%25 sure%0Areally" {
		t.Errorf("ghData: %q", got)
	}
}

func TestTheTextFitsATerminal(t *testing.T) {
	var b strings.Builder
	if err := sample().WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(b.String(), "\n") {
		if len(l) > 120 {
			t.Errorf("a line of %d columns: %q", len(l), l)
		}
	}
	if !strings.HasPrefix(b.String(), "phptune gate: NEW is worse than OLD: mix (+21% CPU)") {
		t.Errorf("the summary starts %q", strings.SplitN(b.String(), "\n", 2)[0])
	}
}

// The gate reads a comparison's interval one-sided: an inconclusive one wholly below the minimum effect is shown
// not worse; nothing short of a worse verdict is worse.
func TestWhatAComparisonMeansForTheGate(t *testing.T) {
	at := func(v stats.Verdict, hi float64) *stats.Comparison {
		return &stats.Comparison{Verdict: v, N: 8, LogHi: math.Log1p(hi)}
	}
	for _, c := range []struct {
		vs   *stats.Comparison
		want string
	}{
		{nil, Undecided},
		{at(stats.Worse, 0.2), Worse},
		{at(stats.Better, -0.1), NotWorse},
		{at(stats.NoDifference, 0.02), NotWorse},
		{at(stats.Inconclusive, 0.029), NotWorse},
		{at(stats.Inconclusive, 0.031), Undecided},
		{at(stats.Error, 0), Undecided},
		{&stats.Comparison{Verdict: stats.Inconclusive, N: 1, LogHi: -1}, Undecided},
	} {
		if got := gateOf(c.vs, 0.03); got != c.want {
			t.Errorf("%+v: %s, want %s", c.vs, got, c.want)
		}
	}
	cs := func(g ...string) []Comparison {
		var out []Comparison
		for _, s := range g {
			out = append(out, Comparison{Gate: s})
		}
		return out
	}
	for _, c := range []struct {
		cs   []Comparison
		want string
	}{
		{cs(NotWorse, NotWorse), NotWorse},
		{cs(NotWorse, Undecided), Undecided},
		{cs(Undecided, Worse), Worse},
		{nil, Undecided},
	} {
		if got := outcome(c.cs); got != c.want {
			t.Errorf("outcome of %v: %s, want %s", c.cs, got, c.want)
		}
	}
}

func TestTheMixIsRacedWhenThereAreTwoURLs(t *testing.T) {
	names := func(urls ...string) []string {
		var mix []load.MixItem
		for _, u := range urls {
			mix = append(mix, load.MixItem{URI: u, Weight: 1})
		}
		var out []string
		for _, c := range comparisons([2][]load.MixItem{mix, mix}, load.Request{Method: "GET"}) {
			out = append(out, c.Name)
		}
		return out
	}
	if got := strings.Join(names("/"), ";"); got != "GET /" {
		t.Errorf("one URL: %s", got)
	}
	if got := strings.Join(names("/", "/a", "/a"), ";"); got != "mix;GET /;GET /a;GET /a (2)" {
		t.Errorf("three URLs: %s", got)
	}
}

// withLatency is sample() with the latency figure: NEW worse on GET /' p99 at the same CPU, and on the mix's.
func withLatency() *Result {
	r := sample()
	lat := func(gate string, v stats.Verdict, change, p99 float64) *Latency {
		return &Latency{RatePerS: 45, RequestsPerTrial: 20, Verdict: v, Gate: gate, Change: change, Lo: change / 2,
			Hi: change * 2, Level: 0.99375, OldP50Ms: 2.1, NewP50Ms: 2.2, OldP99Ms: 5, NewP99Ms: p99}
	}
	r.Comparisons[0].Latency = lat(Worse, stats.Worse, 3.2, 21)
	r.Comparisons[0].WorseOn = []string{FigureCPU, FigureLatency}
	r.Comparisons[1].Latency = lat(NotWorse, stats.Inconclusive, 0.01, 5.05)
	r.Comparisons[2].Latency = lat(Worse, stats.Worse, 4.1, 25.5)
	r.Comparisons[2].CPUGate, r.Comparisons[2].Gate, r.Comparisons[2].WorseOn = NotWorse, Worse, []string{FigureLatency}
	r.Comparisons[3].Latency = lat(Undecided, stats.Inconclusive, 0.2, 6)
	r.Comparisons[3].Latency.LeansWorse = true
	r.LatencyMetric = LatencyMetric
	return r
}

// Every writer says which figure made a comparison worse: GET / is worse on its p99 alone, its CPU no different.
func TestTheWritersNameTheFigureThatGotWorse(t *testing.T) {
	r := withLatency()
	var text, md, junit, ann strings.Builder
	for _, err := range []error{r.WriteText(&text), r.WriteMarkdown(&md), r.WriteJUnit(&junit), r.WriteAnnotations(&ann)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ what, got, want string }{
		{"text", text.String(), "NEW is worse than OLD: mix (+21% CPU and +320% p99), GET /slow.php?a=1|b,c:d (+98% CPU), GET / (+410% p99)"},
		{"text", text.String(), "  GET /                    45     2.1         2.2  5.0         25.5  +410%"},
		{"text", text.String(), "undecided (leans worse)"},
		{"markdown", md.String(), "| **`GET /`** | 45 | 2.1 | 2.2 | 5.0 | 25.5 | **+410%** | [+205%, +820%] | **worse** |"},
		{"markdown", md.String(), "| `GET /` | 500 | 502 | +0.4% | [-1.2%, +2.0%] | no difference | 12 |"},
		{"junit", junit.String(), `<failure message="NEW&#39;s p99 at 45 requests/s is +410% [+205%, +820%]: worse" type="worse">`},
		{"annotations", ann.String(), "::error title=phptune gate%3A GET / is slower (p99 latency)::NEW's p99 latency at 45 requests/s is +410%"},
	} {
		if !strings.Contains(c.got, c.want) {
			t.Errorf("the %s has no %q:\n%s", c.what, c.want, c.got)
		}
	}
	if strings.Contains(ann.String(), "GET / is slower::") {
		t.Errorf("an annotation calls GET /'s CPU worse:\n%s", ann.String())
	}
	for _, l := range strings.Split(text.String(), "\n") {
		if len(l) > 120 {
			t.Errorf("a line of %d columns: %q", len(l), l)
		}
	}
	bars := func(l string) int { return strings.Count(l, "|") - strings.Count(l, `\|`) }
	for _, table := range strings.Split(md.String(), "\n\n") {
		rows := strings.Split(strings.TrimSpace(table), "\n")
		if !strings.HasPrefix(rows[0], "|") {
			continue
		}
		for _, l := range rows[1:] {
			if bars(l) != bars(rows[0]) {
				t.Errorf("row %q has %d cells' bars, its header %d", l, bars(l), bars(rows[0]))
			}
		}
	}
}

// The latency figure is a guard: worse when shown worse, not worse when neither worse nor leaning worse; and a
// comparison is worse when either figure is, not worse when both are.
func TestWhatTheLatencyMeansForTheGate(t *testing.T) {
	vs := func(v stats.Verdict) *stats.Comparison { return &stats.Comparison{Verdict: v, N: 6} }
	for _, c := range []struct {
		vs    *stats.Comparison
		leans bool
		want  string
	}{
		{nil, false, Undecided},
		{vs(stats.Worse), false, Worse},
		{vs(stats.Inconclusive), false, NotWorse},
		{vs(stats.Inconclusive), true, Undecided},
		{vs(stats.Better), false, NotWorse},
		{&stats.Comparison{Verdict: stats.Inconclusive, N: 1}, false, Undecided},
	} {
		if got := latencyGate(c.vs, c.leans); got != c.want {
			t.Errorf("%+v, leans %v: %s, want %s", c.vs, c.leans, got, c.want)
		}
	}
	for _, c := range []struct{ cpu, lat, want, on string }{
		{NotWorse, Worse, Worse, "latency"},
		{Worse, Undecided, Worse, "cpu"},
		{Worse, Worse, Worse, "cpu,latency"},
		{NotWorse, Undecided, Undecided, ""},
		{NotWorse, NotWorse, NotWorse, ""},
		{NotWorse, "", NotWorse, ""},
	} {
		if got, on := together(c.cpu, c.lat); got != c.want || strings.Join(on, ",") != c.on {
			t.Errorf("CPU %s, latency %s: %s on %v, want %s on %s", c.cpu, c.lat, got, on, c.want, c.on)
		}
	}
}
