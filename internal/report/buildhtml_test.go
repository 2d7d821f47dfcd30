package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/phpbuild"
)

// testdata/build-result.json is a real run's output: phptune build --variants baseline,pgo,pgo+lto,pgo+bolt
// --rounds 10 on the demo app (Debian's 8.2.32 source, every build from the cache, Debian's own binary added since
// the installed PHP is newer, pgo+huge_code_pages credited by its probe), with the environment it ran in.
func recordedBuild(t testing.TB) *phpbuild.Result {
	t.Helper()
	data, err := os.ReadFile("testdata/build-result.json")
	if err != nil {
		t.Fatal(err)
	}
	var r phpbuild.Result
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

// withUnavailable adds what a run with --variants baseline,pgo,pgo+lto, a failed smoke test and an extension
// without its -dev package would hold.
func withUnavailable(r *phpbuild.Result) *phpbuild.Result {
	p := *r
	p.Extensions.LeftOut = []phpbuild.LeftOut{{Name: "intl", Reason: "its Debian package libicu-dev is not installed"}}
	// A recorded pgo+lto gives way to one that was never attempted.
	p.Variants = append(slices.DeleteFunc(slices.Clone(r.Variants), func(v *phpbuild.VariantResult) bool { return v.Name == phpbuild.PGOLTO }),
		&phpbuild.VariantResult{Name: phpbuild.PGOLTO, Reason: "not built: plain -flto fails to link PHP 8.2 (global register variables, GCC PR 68384)"},
		&phpbuild.VariantResult{Name: "pgo-jit", Reason: "smoke test failed: /articles/7: status 500\nPHP Fatal error:  Uncaught <Error> in index.php:12",
			Steps: []phpbuild.Step{{Name: "unpack", Seconds: 4}, {Name: "configure", Seconds: 200}}})
	return &p
}

// expectedBuildMarks counts, from the result alone, the marks each chart must show: a gain per variant and
// set measured against the baseline, a bar per variant and set timed, a throughput change per variant.
func expectedBuildMarks(r *phpbuild.Result) map[string]int {
	want := map[string]int{}
	for _, v := range r.Variants {
		if v.Name != phpbuild.Baseline {
			want["gain"] += len(v.GainPct)
		}
		want["time"] += len(v.TimePerReqUS)
		if v.Throughput != nil {
			want["throughput"]++
		}
		want["steps"] += len(v.Steps)
	}
	for k, n := range want {
		if n == 0 {
			delete(want, k)
		}
	}
	return want
}

func TestBuildHTMLFromRecordedRun(t *testing.T) {
	r := withUnavailable(recordedBuild(t))
	var b bytes.Buffer
	if err := BuildHTML(&b, r); err != nil {
		t.Fatal(err)
	}
	page := html.UnescapeString(b.String())
	pgo := r.Variant(phpbuild.PGO)
	// The headline first: pgo's gain on each set with its CI and verdict, in honest words.
	head := signedPct(pgo.GainPct["train"]) + "</div>\n<div class=\"label\">pgo on the training URLs"
	if i := strings.Index(page, head); i < 0 || i > strings.Index(page, `id="charts"`) {
		t.Errorf("headline %q missing or not before the charts", head)
	}
	for _, v := range r.Variants {
		for set, g := range v.GainPct {
			ci := v.GainCIPct[set]
			card := fmt.Sprintf("%s</div>\n<div class=\"label\">%s on the %s</div>\n<div class=\"ci\">interval [%s, %s] <span class=\"badge %s\">",
				signedPct(g), v.Name, setLabel(set), signedPct(ci[0]), signedPct(ci[1]), v.Verdict[set])
			if !strings.Contains(page, card) {
				t.Errorf("no card for %s on %s: %q", v.Name, set, card)
			}
		}
	}
	// Every variant's outcome on every set in words that claim no more than its verdict.
	verdicts := map[string]bool{}
	for _, v := range r.Variants {
		for set, g := range v.GainPct {
			if v.Name == phpbuild.Baseline {
				continue
			}
			var want string
			switch v.Verdict[set] {
			case "better":
				want = fmt.Sprintf("%s: %.1f%% less time per request (interval", setLabel(set), g)
			case "worse":
				want = fmt.Sprintf("%s: %.1f%% more time per request (interval", setLabel(set), -g)
			default:
				want = fmt.Sprintf("%s: no measurable difference (estimate %s,", setLabel(set), signedPct(g))
			}
			verdicts[v.Verdict[set]] = true
			if !strings.Contains(page, want) {
				t.Errorf("%s's %s on the %s is not said as %q", v.Name, v.Verdict[set], set, want)
			}
		}
	}
	if len(verdicts) < 2 {
		t.Errorf("the recorded run holds only the verdicts %v: too few to test the wording", verdicts)
	}
	if strings.Contains(strings.ToLower(page), "no gain") {
		t.Error("the page says \"no gain\"")
	}
	// The level in words, once, as tune's summary says it: no "95% CI" beside each figure, no method's name.
	if want := "All verdicts of the build hold together at 95% confidence"; !strings.Contains(page, want) {
		t.Errorf("the page does not say %q", want)
	}
	if m := regexp.MustCompile(`\d+(\.\d+)?% CI|confidence.sequence|error budget`).FindString(htmlText(page)); m != "" {
		t.Errorf("the page says %q where words say the level once", m)
	}
	// Throughput through php-fpm, instructions with the caveat.
	if tp := pgo.Throughput; !strings.Contains(page, fmt.Sprintf("<td class=\"num\">%s</td><td class=\"num\">%s</td><td class=\"num\">%s</td>",
		rate(tp.RPS), rate(tp.BaselineRPS), signedPct(tp.GainPct))) {
		t.Error("throughput table lacks pgo's req/s")
	}
	if !strings.Contains(page, "understate it several-fold") || !strings.Contains(page, signedPct(pgo.IPRChangePct["train"])+" instructions against a gain of "+signedPct(pgo.GainPct["train"])) {
		t.Error("instructions lack the caveat with this run's figures")
	}
	// Unavailable variants with their reasons (the first line, the rest kept below it), never in the builds
	// table unless attempted.
	for _, want := range []string{"GCC PR 68384", "smoke test failed: /articles/7: status 500", "PHP Fatal error:  Uncaught <Error> in index.php:12"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if !strings.Contains(b.String(), "&lt;Error&gt;") {
		t.Error("a reason's markup is not escaped")
	}
	builds := page[strings.Index(page, `id="builds"`):]
	if strings.Contains(builds, "<b>pgo+lto</b>") || !strings.Contains(builds, "<b>pgo-jit</b></td><td>failed") {
		t.Error("builds table: pgo+lto was never attempted, pgo-jit failed")
	}
	// Build steps with timings, cached or not; configure args, notes, environment.
	for _, want := range []string{
		"Debian's own binary, not built",
		"--disable-all --enable-fpm --enable-cgi --enable-opcache --enable-ctype --enable-filter",
		"older than the installed PHP 8.2.36", r.Guard, "10 interleaved rounds of php-cgi -T pinned to CPU 1",
		"/api/articles?per_page=20",
		"<td class=\"mono\">intl</td><td>its Debian package libicu-dev is not installed</td>",
		"Extensions built in: <span class=\"mono\">ctype</span>, <span class=\"mono\">filter</span>.",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	// Each build's status and its steps with their times, from the record.
	for _, v := range r.Variants {
		if v.Cached && v.BuildSeconds > 0 && !strings.Contains(builds, "<b>"+v.Name+"</b></td><td>cached: reused from an earlier build that took "+wholeSecs(v.BuildSeconds)) {
			t.Errorf("builds table lacks %s's cached build and its time", v.Name)
		}
		if v.Of != "" && !strings.Contains(builds, "<b>"+v.Name+"</b></td><td>"+v.Of+"'s binaries, run with "+v.Setting) {
			t.Errorf("builds table does not say %s runs %s's binaries with %s", v.Name, v.Of, v.Setting)
		}
		for _, st := range v.Steps {
			if !strings.Contains(builds, st.Name+" <span class=\"note\">"+wholeSecs(st.Seconds)) {
				t.Errorf("builds table lacks %s's step %s (%s)", v.Name, st.Name, wholeSecs(st.Seconds))
			}
		}
	}
	if got, want := declaredMarks(page), expectedBuildMarks(r); !sameCounts(got, want) || len(want) != 4 {
		t.Errorf("charts' marks %v, want %v", got, want)
	}
	// Self-contained: nothing loaded from anywhere.
	for _, bad := range []string{"src=", "href=", "@import", "url("} {
		if strings.Contains(page, bad) {
			t.Errorf("page refers to something outside it: %q", bad)
		}
	}
}

// A build without verification (--no-verify) or interrupted: no headline figures, no charts, and it says so.
func TestBuildHTMLWithoutVerification(t *testing.T) {
	p := unverified(recordedBuild(t))
	var b bytes.Buffer
	if err := BuildHTML(&b, p); err != nil {
		t.Fatal(err)
	}
	page := html.UnescapeString(b.String())
	for _, want := range []string{`id="partial"`, "No verification", "cc (Debian 12.2.0-14) 12.2.0", "phptune build --no-verify"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	// Only the build steps' chart: nothing was timed.
	if got, want := declaredMarks(page), expectedBuildMarks(p); len(got) != 1 || got["steps"] != want["steps"] || want["steps"] == 0 {
		t.Errorf("charts' marks %v, want only the build steps (%d)", got, want["steps"])
	}
	for _, absent := range []string{`id="times"`, `id="instructions"`, `id="throughput"`, "verification</dt>"} {
		if strings.Contains(page, absent) {
			t.Errorf("page has %q without verification", absent)
		}
	}
}

// unverified is the recorded build as if interrupted before its verification.
func unverified(r *phpbuild.Result) *phpbuild.Result {
	p := *r
	p.Rounds, p.Partial = 0, true
	p.Variants = nil
	for _, v := range r.Variants {
		c := *v
		c.TimePerReqUS, c.GainPct, c.GainCIPct, c.Verdict, c.IPR, c.IPRChangePct, c.Throughput = nil, nil, nil, nil, nil, nil, nil
		p.Variants = append(p.Variants, &c)
	}
	p.Environment = &phpbuild.Environment{Compiler: "cc (Debian 12.2.0-14) 12.2.0", CommandLine: []string{"phptune", "build", "--no-verify"}}
	return &p
}
