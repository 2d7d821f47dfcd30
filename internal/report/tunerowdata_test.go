package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/stats"
	"github.com/phptune/phptune/internal/tune"
)

// A row that says what it was compared on only as data (tune.KnobRow.Vs) renders byte for byte as the same row
// with only the words did (Compared, as every recorded result.json has it), in the terminal, the summary,
// report.html and the answer in result.json.
func TestARowsDataRendersAsItsWordsDid(t *testing.T) {
	for _, path := range []string{"testdata/tune-result.json", "testdata/tune-result-2.json", "testdata/tune-result-3.json",
		"testdata/tune-result-soak.json"} {
		t.Run(path, func(t *testing.T) {
			words := recordedTuneFile(t, path)
			// An unset value, which the words write "(unset)".
			words.Knobs = append(words.Knobs, tune.KnobRow{Name: "opcache_memory", Value: "", From: "", Metric: tune.MetricCPU,
				EffectPct: -2, CILowPct: -4, CIHighPct: -0.5, Verdict: stats.Worse, Compared: "opcache_memory=256 vs (unset)", Rounds: 7})
			data := recordedTuneFile(t, path)
			data.Knobs = append([]tune.KnobRow(nil), words.Knobs...)
			compared := 0
			for i, k := range data.Knobs {
				if k.Compared != "" {
					compared++
					data.Knobs[i].Vs, data.Knobs[i].Compared = &tune.Versus{Knob: k.Name}, ""
					data.Knobs[i].Vs.B, data.Knobs[i].Vs.A = wordsOf(t, k.Compared, k.Name)
				}
			}
			if compared < 2 {
				t.Fatalf("%d compared rows: nothing to compare", compared)
			}
			if got, want := renderings(t, data), renderings(t, words); got != want {
				t.Errorf("rows as data render otherwise than as words:\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// wordsOf is the candidate and incumbent of the words "NAME=B vs A", split here by hand so that the test does
// not take them from the reader it tests.
func wordsOf(t *testing.T, s, name string) (b, a string) {
	t.Helper()
	unset := func(v string) string {
		if v == "(unset)" {
			return ""
		}
		return v
	}
	rest, ok := strings.CutPrefix(s, name+"=")
	parts := strings.Split(rest, " vs ")
	if !ok || len(parts) != 2 {
		t.Fatalf("%q: not %s=B vs A", s, name)
	}
	return unset(parts[0]), unset(parts[1])
}

// renderings are r's terminal account, summary, report.html and answer, one after another.
func renderings(t *testing.T, r *tune.Result) string {
	t.Helper()
	var b bytes.Buffer
	Tune(&b, r)
	TuneSummary(&b, r)
	if err := TuneHTML(&b, r, nil); err != nil {
		t.Fatal(err)
	}
	answer, err := json.Marshal(AnswerOf(r))
	if err != nil {
		t.Fatal(err)
	}
	b.Write(answer)
	return b.String()
}
