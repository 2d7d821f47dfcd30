package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/compare"
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

// A row that says its state as data (tune.KnobRow.State, Reason) renders byte for byte as the same row with only
// its note did, as every recorded result.json has it; and the renderers take the state from the data, not the
// note: the data rows' notes are scrambled where the state and reason say all a reader is shown.
func TestARowsStateRendersAsItsNoteDid(t *testing.T) {
	for _, path := range []string{"testdata/tune-result-3.json", "testdata/tune-result-soak.json"} {
		t.Run(path, func(t *testing.T) {
			words := recordedTuneFile(t, path)
			words.Knobs = append(words.Knobs, tune.KnobRow{Name: "fastcgi_buffers", Value: "8 4k", From: "8 4k", Note: "pinned"})
			data := recordedTuneFile(t, path)
			data.Knobs = append([]tune.KnobRow(nil), words.Knobs...)
			said := map[tune.RowState]int{}
			for i, k := range data.Knobs {
				row := &data.Knobs[i]
				row.State, row.Reason = stateOfWords(k)
				if row.State == tune.StateNotTried || row.State == tune.StateSoak || row.State == tune.StatePinned {
					row.Note = "(words a reader is not shown)"
					said[row.State]++
				}
			}
			if said[tune.StatePinned] == 0 || said[tune.StateNotTried]+said[tune.StateSoak] == 0 {
				t.Fatalf("rows said by their state: %v; nothing to compare", said)
			}
			if got, want := renderings(t, data), renderings(t, words); got != want {
				t.Errorf("rows' states as data render otherwise than as notes:\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// stateOfWords is the state and reason of a recorded row, read here by hand so that the test does not take
// them from the reader it tests.
func stateOfWords(k tune.KnobRow) (tune.RowState, string) {
	if k.Verdict != "" {
		return tune.StateRaced, ""
	}
	if k.Note == "pinned" {
		return tune.StatePinned, ""
	}
	for words, s := range map[string]tune.RowState{"not tried: ": tune.StateNotTried, "soak: ": tune.StateSoak} {
		if why, ok := strings.CutPrefix(k.Note, words); ok {
			return s, why
		}
	}
	return tune.StateNoAlternative, ""
}

// A comparison of tune runs words a run's cell from the row's state, not its note; a compare.json written before
// states reads it from the note.
func TestCompareTunesCellOfAState(t *testing.T) {
	k := compare.KnobAgreement{Name: "max_requests", Values: []string{"0", "0", "0"}, Verdicts: make([]stats.Verdict, 3),
		Present: []bool{true, true, true}, Decided: make([]bool, 3), Compared: make([]string, 3),
		Notes:  []string{"pinned", "(words)", "not tried: left alone"},
		States: []tune.RowState{tune.StateNotTried, tune.StateSoak, ""}}
	for i, want := range []string{"not tried", "from the soak", "not tried"} {
		if got := runCell(k, i); got != want {
			t.Errorf("cell %d: %q, want %q", i, got, want)
		}
	}
	k.States = nil // an older compare.json
	if got := runCell(k, 0); got != "pinned" {
		t.Errorf("cell of an old pinned row: %q, want pinned", got)
	}
}
