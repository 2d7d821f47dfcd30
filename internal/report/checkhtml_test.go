package report

import (
	"bytes"
	"encoding/json"
	"html"
	"os"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/check"
)

// testdata/check-result.json is a real run's output: phptune check --for 8s --interval 500ms on the two pools of
// `phptune serve --pm dynamic --max-children 2`, the unix one under 8 connections through nginx (bench), the TCP
// one idle.
func recordedCheck(t testing.TB) *check.Result {
	t.Helper()
	data, err := os.ReadFile("testdata/check-result.json")
	if err != nil {
		t.Fatal(err)
	}
	var r check.Result
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

// expectedCheckMarks counts, from the result alone, the marks each chart must show: a busy count and a memory
// figure per read of the workers' memory (every status read in results of before memory_t).
func expectedCheckMarks(r *check.Result) map[string]int {
	want := map[string]int{}
	for i, p := range r.Pools {
		if n := len(p.Series.T); n > 0 {
			want["busy-"+itoa(i)] = n
			want["memory-"+itoa(i)] = n
			if m := len(p.Series.MT); m > 0 {
				want["memory-"+itoa(i)] = m // memory read at some samples only (memory_t)
			}
		}
	}
	return want
}

func itoa(i int) string { return jsonInt(i) }

func TestCheckHTMLShowsFindingsAndCharts(t *testing.T) {
	r := recordedCheck(t)
	// A hostile pool name and URI are escaped, never markup.
	r.Pools[1].Name = `<script>alert(1)</script>`
	var buf bytes.Buffer
	if err := CheckHTML(&buf, r); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	if strings.Contains(page, "<script>alert(1)") || !strings.Contains(page, html.EscapeString("<script>alert(1)</script>")) {
		t.Error("the pool's name is not escaped")
	}
	for id, n := range expectedCheckMarks(r) {
		if !strings.Contains(page, `data-chart="`+id+`" data-marks="`+itoa(n)+`"`) {
			t.Errorf("chart %s: not drawn with %d marks", id, n)
		}
	}
	p := r.Pools[0]
	if len(p.Findings) == 0 || len(p.Suggestions) == 0 {
		t.Fatalf("the recorded run has no finding: %+v", p)
	}
	for _, f := range p.Findings {
		if !strings.Contains(page, `data-finding="`+f.ID+`"`) || !strings.Contains(page, html.EscapeString(f.Title)) {
			t.Errorf("finding %s missing from the page", f.ID)
		}
	}
	for _, s := range p.Suggestions {
		if !strings.Contains(page, html.EscapeString(s.Verify)) {
			t.Errorf("suggestion %s: its tune command is missing", s.Setting)
		}
	}
	if !strings.Contains(page, "No problem found.") {
		t.Error("the idle pool does not say it is fine")
	}
}

func jsonInt(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// The check page in a real browser: no console errors, every chart shows each of its marks inside its box, no
// label cut off; likewise a partial result.
func TestCheckReportRendersInChromium(t *testing.T) {
	ctx := browser(t)
	dir := t.TempDir()
	r := recordedCheck(t)
	for _, partial := range []bool{false, true} {
		r.Partial = partial
		path := dir + "/check.html"
		if partial {
			path = dir + "/check-partial.html"
		}
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := CheckHTML(f, r); err != nil {
			t.Fatal(err)
		}
		f.Close()
		seen, title, _, layout := openPage(t, ctx, path)
		if !strings.Contains(title, r.Pools[0].Name) {
			t.Errorf("title %q lacks the pool", title)
		}
		checkCharts(t, "check", seen, expectedCheckMarks(r))
		checkLayout(t, path, layout, false)
	}
}
