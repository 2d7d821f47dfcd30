package report

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestTuneSummaryFirst: the answer a run prints by default fits 30 lines of 120 columns on every recorded run,
// leads with what to change, and its figures (each change's estimate and interval, the headline's) are the full
// account's: both are rendered from the same rows.
func TestTuneSummaryFirst(t *testing.T) {
	files, _ := filepath.Glob("testdata/tune-result*.json")
	if len(files) == 0 {
		t.Fatal("no recorded tune results in testdata")
	}
	for _, f := range files {
		r := recordedTuneFile(t, f)
		var sum, full strings.Builder
		TuneSummary(&sum, r)
		Tune(&full, r)
		lines := strings.Split(strings.TrimRight(sum.String(), "\n"), "\n")
		if len(lines) > 30 {
			t.Errorf("%s: the summary is %d lines, want at most 30:\n%s", f, len(lines), sum.String())
		}
		for _, l := range lines {
			if textLen(l) > termWidth {
				t.Errorf("%s: a line of %d columns: %q", f, textLen(l), l)
			}
		}
		changes, _, _, _ := sortLines(knobLines(r))
		for _, c := range changes {
			if c.Change == nil {
				continue
			}
			iv := intervalText(c.Change)
			if !strings.Contains(sum.String(), iv) || !strings.Contains(full.String(), iv) {
				t.Errorf("%s: %s's interval %s is not in both renderings", f, c.Name, iv)
			}
		}
		if len(changes) > 0 && !strings.Contains(sum.String(), "Change (from ") {
			t.Errorf("%s: the summary does not lead with the changes:\n%s", f, sum.String())
		}
		t.Logf("%s:\n%s", f, sum.String())
	}
}

// TestTuneSummarySaysWhatReqPerCPUIs: the summary has no legend, so a change measured on php-fpm's CPU says once
// what req/CPU-s is; one measured on requests/s needs no such line.
func TestTuneSummarySaysWhatReqPerCPUIs(t *testing.T) {
	r := recordedTune3(t)
	var b strings.Builder
	TuneSummary(&b, r)
	if strings.Contains(b.String(), "req/CPU-s is") {
		t.Errorf("no change on CPU, yet the summary explains req/CPU-s:\n%s", b.String())
	}
	for i, k := range r.Knobs {
		if k.Name == "jit" {
			r.Knobs[i].Value = "tracing" // kept as the change its comparison measured
		}
	}
	b.Reset()
	TuneSummary(&b, r)
	out := strings.Join(strings.Fields(b.String()), " ")
	if !strings.Contains(out, "jit off -> tracing") || strings.Count(out, "req/CPU-s is requests served per second of php-fpm's CPU time") != 1 {
		t.Errorf("a change on CPU, and req/CPU-s not said once:\n%s", b.String())
	}
}
