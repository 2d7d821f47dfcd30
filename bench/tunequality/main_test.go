package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/phptune/phptune/bench/internal/capture"
	"github.com/phptune/phptune/internal/stats"
	"github.com/phptune/phptune/internal/tune"
)

// Every size to 16, every second to 32, every fourth beyond; with -full-grid every size.
func TestGridSizes(t *testing.T) {
	want := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 18, 20, 22, 24, 26, 28, 30, 32, 36, 40}
	if got := gridSizes(40, false); !slices.Equal(got, want) {
		t.Errorf("gridSizes(40) = %v, want %v", got, want)
	}
	if got := gridSizes(7, true); !slices.Equal(got, []int{1, 2, 3, 4, 5, 6, 7}) {
		t.Errorf("gridSizes(7, full) = %v", got)
	}
	if got := gridSizes(0, false); len(got) != 0 {
		t.Errorf("gridSizes(0) = %v", got)
	}
	// What the thinning promises: where sizes are skipped (past 16), neighbours at most 12.5% apart.
	sizes := gridSizes(128, false)
	for i := 1; i < len(sizes); i++ {
		if sizes[i-1] >= 16 && float64(sizes[i]) > 1.125*float64(sizes[i-1]) {
			t.Errorf("sizes %d and %d are more than 12.5%% apart", sizes[i-1], sizes[i])
		}
	}
}

func TestChosen(t *testing.T) {
	for _, c := range []struct {
		only, app string
		want      bool
	}{
		{"", "io-20ms", true},
		{"io-20ms", "io-20ms", true},
		{"memory-16MiB,io-20ms", "io-20ms", true},
		{"io", "io-20ms", false},
		{"io-20ms,", "memory-16MiB", false},
		{"io-20ms-x", "io-20ms", false},
	} {
		if got := chosen(c.only, c.app); got != c.want {
			t.Errorf("chosen(%q, %q) = %v", c.only, c.app, got)
		}
	}
}

// A raced knob shows its effect and interval; one not raced or inconclusive shows its note and counts as
// undecided in its run.
func TestVerdicts(t *testing.T) {
	r := &tune.Result{Knobs: []tune.KnobRow{
		{Name: "jit", Value: "tracing", Verdict: stats.Better, Vs: &tune.Versus{Knob: "jit", B: "tracing", A: "off"},
			EffectPct: 12.3, CILowPct: 5, CIHighPct: 20.5},
		{Name: "opcache", Value: "on", State: tune.StateNotRaced, Note: "not raced: the budget ran out"},
		{Name: "pm", Value: "dynamic", Verdict: stats.Inconclusive,
			Vs:        &tune.Versus{Knob: "pm", B: "static", A: "dynamic"},
			EffectPct: 1, CILowPct: -2, CIHighPct: 4, Note: "needs 40 rounds"},
	}}
	m, undecided := verdicts(2, r)
	want := map[string]verdict{
		"jit":     {"better", "tracing", "better tracing +12.3% [+5.0, +20.5]"},
		"opcache": {"", "on", " on (not raced: the budget ran out)"},
		"pm":      {"inconclusive", "dynamic", "inconclusive dynamic +1.0% [-2.0, +4.0] (needs 40 rounds)"},
	}
	for name, w := range want {
		if m[name] != w {
			t.Errorf("%s: %+v, want %+v", name, m[name], w)
		}
	}
	if len(m) != len(want) || !slices.Equal(undecided, []string{"opcache in run 2", "pm in run 2"}) {
		t.Errorf("%d verdicts, undecided %q", len(m), undecided)
	}
}

// Two runs agree when every knob decided in either is decided alike in both: the same verdict on the same value.
// A knob decided in both with another verdict or on another value contradicts; one decided in a run only
// straddles.
func TestAgreementLine(t *testing.T) {
	v := func(word, value string) verdict { return verdict{word, value, word + " " + value} }
	a := map[string]verdict{"jit": v("better", "tracing"), "pm": v("no_difference", "dynamic")}
	var line string
	out := capture.Stdout(t, func() { line = agreementLine(a, a, nil) })
	if want := "demo          1 knobs decided better/worse in either run; every verdict agrees between the two runs; " +
		"every knob tried in both runs"; line != want {
		t.Errorf("runs alike:\n %s\nwant\n %s", line, want)
	}
	if strings.Count(out, "\n") != 2 || !strings.Contains(out, "demo: jit ") || !strings.Contains(out, "demo: pm ") {
		t.Errorf("want a line for each knob:\n%s", out)
	}

	a = map[string]verdict{"jit": v("better", "tracing"), "keepalive": v("better", "on"), "preload": v("worse", "on"),
		"opcache": v("worse", "off"), "pm": v("no_difference", "dynamic"), "listen": v("no_difference", "unix")}
	b := map[string]verdict{"jit": v("better", "function"), "keepalive": v("no_difference", "on"),
		"preload": v("worse", "on"), "opcache": v("better", "off"), "pm": v("no_difference", "dynamic"),
		"listen": v("better", "tcp")}
	capture.Stdout(t, func() { line = agreementLine(a, b, []string{"listen in run 2"}) })
	want := "demo          5 knobs decided better/worse in either run; verdicts DISAGREE: contradicting " +
		"jit (better tracing / better function); opcache (worse off / better off): decided in one run only " +
		"keepalive (better on / no_difference on); listen (no_difference unix / better tcp); " +
		"not decided for the budget: listen in run 2"
	if line != want {
		t.Errorf("runs that differ:\n %s\nwant\n %s", line, want)
	}
}

// The apps' scripts are valid PHP.
func TestAppsAreValidPHP(t *testing.T) {
	php, err := exec.LookPath("php")
	if err != nil {
		t.Skip("no php CLI to lint the apps with")
	}
	for _, a := range apps {
		path := filepath.Join(t.TempDir(), "index.php")
		if err := os.WriteFile(path, []byte(a.php), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(php, "-l", path).CombinedOutput(); err != nil {
			t.Errorf("%s: php -l: %v\n%s", a.name, err, out)
		}
	}
}
