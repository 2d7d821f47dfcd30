package main

import (
	"encoding/json"
	"html"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/phpbuild"
)

// phptune report renders a recorded build result (internal/report/testdata/build-result.json) beside it.
func TestReportRendersBuild(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join(reportTestdata, "build-result.json"))
	if err != nil {
		t.Fatal(err)
	}
	res := filepath.Join(dir, "result.json")
	if err := os.WriteFile(res, data, 0o644); err != nil {
		t.Fatal(err)
	}
	r := phptune(t, "report", res)
	out := filepath.Join(dir, "report.html")
	if r.code != 0 || !strings.Contains(r.stdout, out) {
		t.Fatalf("report: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	// html/template writes the + of pgo+lto as &#43;.
	page := html.UnescapeString(string(b))
	var rec phpbuild.Result
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	// A gain per variant and set against the baseline, a bar per variant and set timed, a throughput change per
	// variant, a segment per build step: counted from the record.
	want := map[string]int{}
	for _, v := range rec.Variants {
		if !strings.Contains(page, "<b>"+v.Name+"</b>") {
			t.Errorf("page lacks variant %s", v.Name)
		}
		if v.Name != phpbuild.Baseline {
			want["gain"] += len(v.GainPct)
		}
		want["time"] += len(v.TimePerReqUS)
		if v.Throughput != nil {
			want["throughput"]++
		}
		want["steps"] += len(v.Steps)
	}
	if m := marks(page); m["gain"] != want["gain"] || m["time"] != want["time"] || m["throughput"] != want["throughput"] ||
		m["steps"] != want["steps"] || want["gain"] == 0 || want["steps"] == 0 {
		t.Errorf("charts' marks %v, want %v", m, want)
	}
	if !strings.Contains(page, "phptune/build/v1") {
		t.Error("page lacks the schema")
	}

	// A build result that is not one is refused in one line, and nothing is written.
	bad := filepath.Join(t.TempDir(), "result.json")
	os.WriteFile(bad, []byte(`{"schema": "phptune/build/v1", "variants": "pgo"}`), 0o644)
	oneLineError(t, phptune(t, "report", bad), "bad phptune/build/v1 result")
	if _, err := os.Stat(filepath.Join(filepath.Dir(bad), "report.html")); err == nil {
		t.Error("a refused input wrote report.html")
	}
}
