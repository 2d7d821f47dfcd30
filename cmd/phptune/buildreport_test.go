package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	page := string(b)
	var rec buildJSON
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	for _, v := range rec.Variants {
		if !strings.Contains(page, "<b>"+v.Name+"</b>") {
			t.Errorf("page lacks variant %s", v.Name)
		}
	}
	// A gain per variant and set against the baseline, a bar per variant and set, a throughput change per
	// variant, a segment per build step (3 of the baseline, 7 of pgo).
	if m := marks(page); m["gain"] != 6 || m["time"] != 9 || m["throughput"] != 2 || m["steps"] != 10 {
		t.Errorf("charts' marks %v, want gain 6, time 9, throughput 2, steps 10", m)
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
