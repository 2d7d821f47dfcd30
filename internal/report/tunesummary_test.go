package report

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/stats"
	"github.com/phptune/phptune/internal/tune"
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

// TestTradedForTheTailLeadsTheSummary: a runtime ahead on goodput but not taken for its p99 (issue 53: mod_php
// +5.1% req/s at a p99 24 times nginx-fpm's) is said in the summary's first lines, not listed as shown and kept,
// and its row in the full account carries the trade.
func TestTradedForTheTailLeadsTheSummary(t *testing.T) {
	r := recordedTuneFile(t, "testdata/tune-result.json")
	trade := "apache-modphp +5.1% req/s but p99 24x worse: kept nginx-fpm"
	r.Knobs = append(r.Knobs, tune.KnobRow{Name: "server", Value: "nginx-fpm", From: "nginx-fpm", Metric: tune.MetricGoodput,
		EffectPct: 5.1, CILowPct: 0.1, CIHighPct: 10.3, Verdict: stats.Better, Vs: &tune.Versus{Knob: "server", B: "apache-modphp", A: "nginx-fpm"},
		Rounds: 12, Note: trade, Traded: trade})
	var sum, full strings.Builder
	TuneSummary(&sum, r)
	Tune(&full, r)
	lines := strings.Split(sum.String(), "\n")
	if len(lines) < 4 || !strings.Contains(strings.Join(lines[:4], "\n"), "Not taken for its p99: server "+trade+".") {
		t.Errorf("the trade is not in the summary's first lines:\n%s", sum.String())
	}
	_, kept, open, _ := sortLines(knobLines(r))
	for _, l := range append(kept, open...) {
		if strings.HasPrefix(l, "server ") {
			t.Errorf("the server kept for its p99 is listed as shown and kept or open: %q", l)
		}
	}
	if !strings.Contains(full.String(), trade) {
		t.Errorf("the full account's server row does not carry the trade:\n%s", full.String())
	}
}

// TestScreenedIsNotShownInTheSummary: a knob whose every candidate the screen counted doing the same work was
// never timed, so the summary does not list it as "shown and kept" (a statistical verdict) but on a line of its
// own that says it was counted, not timed, and is no verdict (issue 53); report.html and result.json, rendered
// from the same result, say "screened" too, and none of the three a no_difference.
func TestScreenedIsNotShownInTheSummary(t *testing.T) {
	r := recordedTuneFile(t, "testdata/tune-result.json")
	start := startValue("realpath_cache_size", r.Baseline) // kept as it was: screened knobs change nothing
	r.Knobs = append(r.Knobs, tune.KnobRow{Name: "realpath_cache_size", Value: start, From: start,
		Metric: tune.MetricWork, Verdict: tune.Screened,
		Note: "screened out (realpath_cache_size=16M: instructions/request -0.1%, syscalls/request 9.0 -> 9.0): no timed trial"})
	var sum strings.Builder
	TuneSummary(&sum, r)
	out := strings.Join(strings.Fields(sum.String()), " ")
	_, kept, _, _ := sortLines(knobLines(r))
	for _, l := range kept {
		if strings.HasPrefix(l, "realpath_cache_size ") {
			t.Errorf("the screened knob is listed as shown and kept: %q", l)
		}
	}
	want := "Counted, not timed (screened), kept: realpath_cache_size " + knob.Shown("realpath_cache_size", start) +
		": every candidate did the same instructions and system calls a request; no time was measured"
	if !strings.Contains(out, want) {
		t.Errorf("the summary does not say the knob was counted, not timed:\n%s", sum.String())
	}
	for _, l := range strings.Split(sum.String(), "\n") {
		if textLen(l) > termWidth {
			t.Errorf("a line of %d columns: %q", textLen(l), l)
		}
	}
	screenedElsewhere(t, r, "realpath_cache_size")
}

// screenedElsewhere checks that report.html's row and result.json's row and answer call knob screened.
func screenedElsewhere(t *testing.T, r *tune.Result, knob string) {
	t.Helper()
	var page, js bytes.Buffer
	if err := TuneHTML(&page, r, nil); err != nil {
		t.Fatal(err)
	}
	if row := htmlKnobRows(page.String())[knob]; !strings.Contains(row, "screened") ||
		!strings.Contains(row, "counted, not timed") || strings.Contains(row, "no_difference") {
		t.Errorf("report.html's row of %s reads %q, want screened, counted, not timed", knob, row)
	}
	if err := WriteJSON(&js, RecordOf(r)); err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Knobs  []tune.KnobRow `json:"knobs"`
		Answer struct {
			Knobs []struct {
				Knob, Word string
			} `json:"knobs"`
		} `json:"answer"`
	}
	if err := json.Unmarshal(js.Bytes(), &rec); err != nil {
		t.Fatal(err)
	}
	rows, answers := 0, 0
	for _, k := range rec.Knobs {
		if k.Name == knob {
			rows++
			if k.Verdict != tune.Screened {
				t.Errorf("result.json's row of %s: verdict %q, want screened", knob, k.Verdict)
			}
		}
	}
	for _, k := range rec.Answer.Knobs {
		if k.Knob == knob {
			answers++
			if k.Word != "screened" {
				t.Errorf("result.json's answer for %s: %q, want screened", knob, k.Word)
			}
		}
	}
	if rows != 1 || answers != 1 {
		t.Errorf("result.json has %d rows and %d answers for %s, want one each", rows, answers, knob)
	}
}
