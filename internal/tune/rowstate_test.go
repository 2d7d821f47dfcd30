package tune

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/arms"
	"github.com/phptune/phptune/internal/experiment"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/measure"
	"github.com/phptune/phptune/internal/stats"
)

// checkState fails t unless row says its state as data, consistent with its words: a reason where the state
// has one, the note opening with the state's words then that reason; and unless an old row's fallback, reading
// the note alone, reads back the same state and reason.
func checkState(t *testing.T, where string, row KnobRow) {
	t.Helper()
	switch row.State {
	case StateRaced:
		if row.Verdict == "" || row.Reason != "" {
			t.Errorf("%s: raced row %+v: want a verdict and no reason", where, row)
		}
	case StatePinned:
		if row.Note != pinnedWords || row.Verdict != "" {
			t.Errorf("%s: pinned row %+v", where, row)
		}
	case StateNotTried, StateNotRaced, StateNotMeasured, StateSoak:
		if row.Reason == "" || !strings.HasSuffix(row.Note, row.Reason) || row.Note == row.Reason || row.Verdict != "" {
			t.Errorf("%s: %s row %+v: want a reason, after the state's words in its note, and no verdict", where, row.State, row)
		}
	case StateScreened:
		if row.Verdict != Screened || row.Reason == "" {
			t.Errorf("%s: screened row %+v", where, row)
		}
	case StateNoAlternative:
		if row.Verdict != "" {
			t.Errorf("%s: no-alternative row %+v", where, row)
		}
	default:
		t.Errorf("%s: row %+v has no known state", where, row)
	}
	old := row
	old.State, old.Reason = "", ""
	if s, why := old.StateOf(), old.ReasonOf(); s != row.State || why != row.Reason {
		t.Errorf("%s: without its state, row %s reads back as %q (%q), want %q (%q)", where, row.Name, s, why, row.State, row.Reason)
	}
}

// TestEveryRowSaysItsState: every row a simulated run makes, at budgets that race all, some or few of the knobs,
// carries its state and reason, and the old rows' fallback reads the same from its note.
func TestEveryRowSaysItsState(t *testing.T) {
	seen := map[RowState]int{}
	for _, seed := range []int64{1, 2} {
		for _, budget := range []time.Duration{40 * time.Second, 90 * time.Second, 3 * time.Minute} {
			res, _ := simulated(t, demoSim(seed, 0.04, budget))
			for _, row := range res.Knobs {
				checkState(t, budget.String(), row)
				seen[row.State]++
			}
			var js struct {
				Knobs []map[string]any `json:"knobs"`
			}
			b, _ := json.Marshal(res)
			if err := json.Unmarshal(b, &js); err != nil {
				t.Fatal(err)
			}
			for _, k := range js.Knobs {
				if s, _ := k["state"].(string); s == "" {
					t.Errorf("%s: row %v has no \"state\" in result.json", budget, k)
				}
			}
		}
	}
	for _, s := range []RowState{StateRaced, StateNotTried, StateNotRaced} {
		if seen[s] == 0 {
			t.Errorf("no %s row in the simulated runs (%v): the test no longer covers it", s, seen)
		}
	}
}

// TestRowsNotRacedSayWhy: a pinned knob, one left alone, and the soak's max_requests (not run, growth unknown,
// growth shown or not) say so as their state, with the why as their reason.
func TestRowsNotRacedSayWhy(t *testing.T) {
	tu := soakTuner(t, knob.All("", nil), map[string]string{"opcache": "1"}, 0, 25<<20)
	opcache, _ := knob.ByName("opcache")
	if row, ok := tu.notRaced(opcache); !ok || row.State != StatePinned || row.StateOf() != StatePinned {
		t.Errorf("pinned opcache: %+v, %v", row, ok)
	} else {
		checkState(t, "pinned", row)
	}
	jit, _ := knob.ByName("jit")
	tu.skip = map[string]string{"jit": "left alone by --skip"}
	if row, ok := tu.notRaced(jit); !ok || row.State != StateNotTried || row.Reason != "left alone by --skip" ||
		row.Note != "not tried: left alone by --skip" {
		t.Errorf("skipped jit: %+v, %v", row, ok)
	} else {
		checkState(t, "skipped", row)
	}

	for _, c := range []struct {
		sk     *Soak
		state  RowState
		reason string
	}{
		{nil, StateNotMeasured, "--soak off"},
		{soakOf(measure.Growth{}), StateNotMeasured, "no worker served enough requests to tell"},
		{soakOf(measure.Growth{PerRequest: 100, Lo: -50, Hi: 250, Workers: 8, Requests: 6000}), StateSoak, "no growth shown"},
		{soakOf(measure.Growth{PerRequest: 51 << 10, Lo: 49 << 10, Hi: 53 << 10, Workers: 8, Requests: 6000, Shown: true}), StateSoak, "a worker grows"},
	} {
		tu.decided = nil
		tu.soakRow(c.sk, "--soak off; the starting value is kept")
		row := tu.decided["max_requests"]
		if row.State != c.state || !strings.HasPrefix(row.Reason, c.reason) {
			t.Errorf("max_requests from the soak %+v: row %+v, want %s, the reason opening %q", c.sk, row, c.state, c.reason)
		}
		checkState(t, "soak", row)
	}
}

// TestACandidateNotInEffectIsNotTried: a candidate whose setting did not take effect is marked so on its
// comparison; a race all of whose candidates were is not tried, its reason naming each, and one where another
// candidate was compared is raced, its note naming the one not tried.
func TestACandidateNotInEffectIsNotTried(t *testing.T) {
	d := &decider{costs: newCosts()}
	k, _ := knob.ByName("jit")
	rc := &raced{r: race{knob: k, from: knob.Debian(), values: []string{"tracing", "function"}},
		cfgs: []knob.Config{knob.Debian(), knob.Debian(), knob.Debian()}}
	notIn := experiment.ArmResult{Status: experiment.StatusError, Note: "the JIT is not built in", Err: errors.Join(arms.ErrNotInEffect)}
	out := &experiment.Outcome{Ended: experiment.EndBudget, Arms: []experiment.ArmResult{{Status: experiment.StatusOpen}, notIn, notIn}}
	d.report(rc, out)
	for _, c := range rc.comps {
		if !c.NotTried || c.Note != "not tried: the JIT is not built in" {
			t.Errorf("comparison %+v: want not tried", c)
		}
	}
	want := "jit=tracing not tried: the JIT is not built in; jit=function not tried: the JIT is not built in"
	if rc.row.State != StateNotTried || rc.row.Reason != want || rc.row.Verdict != "" {
		t.Errorf("row %+v: want not tried, the reason %q", rc.row, want)
	}

	out.Rounds = 5
	out.Arms[2] = experiment.ArmResult{Status: experiment.StatusOpen, Vs: &stats.Comparison{Verdict: stats.Inconclusive}}
	d.report(rc, out)
	if !rc.comps[0].NotTried || rc.comps[1].NotTried {
		t.Errorf("comparisons %+v: want the first not tried, the second compared", rc.comps)
	}
	if rc.row.State != StateRaced || rc.row.Verdict != stats.Inconclusive || !strings.Contains(rc.row.Note, "jit=tracing not tried") {
		t.Errorf("row %+v: want raced, inconclusive, its note naming jit=tracing not tried", rc.row)
	}
}

// TestAnOldRowsStateIsReadFromItsNote: a row from a result.json written before rows carried a state gets it,
// and its reason, from its verdict and note; a row that carries a state is taken at its word.
func TestAnOldRowsStateIsReadFromItsNote(t *testing.T) {
	old := `[
		{"name": "opcache", "value": "1", "verdict": "better", "compared": "opcache=1 vs 0", "note": "not tried: ignored"},
		{"name": "jit", "value": "tracing", "verdict": "", "note": "pinned"},
		{"name": "backlog", "value": "0", "verdict": "", "note": "not tried: at most 8 connections wait"},
		{"name": "listen", "value": "", "verdict": "", "note": "not raced: the budget leaves it about 3 rounds"},
		{"name": "max_children", "value": "5", "verdict": "", "note": "not re-measured: the budget ran out; the knee's size is kept"},
		{"name": "max_requests", "value": "0", "verdict": "", "note": "soak: a worker grows 1 KiB a request"},
		{"name": "max_requests", "value": "0", "verdict": "", "note": "not measured: --soak off"},
		{"name": "huge_code_pages", "value": "0", "verdict": "screened", "note": "screened out (huge_code_pages=1: ...): no timed trial"},
		{"name": "preload", "value": "", "verdict": "", "note": "no alternative to try"},
		{"name": "pm", "value": "static", "verdict": "", "note": "pm=ondemand not tried: not in effect"},
		{"name": "keepalive", "value": "off", "verdict": "error", "note": "keepalive=on failed: no answer"},
		{"name": "jit", "value": "off", "state": "not_tried", "reason": "said so", "note": "pinned"}
	]`
	var rows []KnobRow
	if err := json.Unmarshal([]byte(old), &rows); err != nil {
		t.Fatal(err)
	}
	want := []struct {
		state  RowState
		reason string
	}{
		{StateRaced, ""},
		{StatePinned, ""},
		{StateNotTried, "at most 8 connections wait"},
		{StateNotRaced, "the budget leaves it about 3 rounds"},
		{StateNotRaced, "the budget ran out; the knee's size is kept"},
		{StateSoak, "a worker grows 1 KiB a request"},
		{StateNotMeasured, "--soak off"},
		{StateScreened, "screened out (huge_code_pages=1: ...): no timed trial"},
		{StateNoAlternative, ""},
		{"", ""}, // its words name no state: read as not compared
		{StateRaced, ""},
		{StateNotTried, "said so"},
	}
	for i, r := range rows {
		if s, why := r.StateOf(), r.ReasonOf(); s != want[i].state || why != want[i].reason {
			t.Errorf("old row %s %q: %q (%q), want %q (%q)", r.Name, r.Note, s, why, want[i].state, want[i].reason)
		}
	}
}

// TestPoolSizeStateOf: a pool size says how it was come by where no race chose it; one from a result.json
// written before it carried a state reads it from the note.
func TestPoolSizeStateOf(t *testing.T) {
	for _, c := range []struct {
		ps   PoolSize
		want RowState
	}{
		{PoolSize{State: StatePinned, Note: "anything"}, StatePinned},
		{PoolSize{Note: "pinned"}, StatePinned},
		{PoolSize{Note: NotRemeasured}, StateNotRaced},
		{PoolSize{Note: NotRaced}, StateNotRaced},
		{PoolSize{Note: "no other size fits"}, ""},
		{PoolSize{Decided: true}, ""},
	} {
		if got := c.ps.StateOf(); got != c.want {
			t.Errorf("%+v: state %q, want %q", c.ps, got, c.want)
		}
	}
}
