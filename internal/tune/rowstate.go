package tune

import "strings"

// RowState is how a knob's row came by its value, as data: readers branch on it, never on the row's Note,
// which is words for a person and may change.
type RowState string

const (
	// StateRaced: the knob's race decided the row; its Verdict says how (an error included).
	StateRaced RowState = "raced"
	// StatePinned: the user fixed the value (--knob NAME=VALUE).
	StatePinned RowState = "pinned"
	// StateNotTried: the knob cannot matter here, was left alone, or none of its values got a round.
	StateNotTried RowState = "not_tried"
	// StateNotRaced: the budget could not decide its race, so it was not run (or the pool's size not
	// re-measured); a value was kept without one.
	StateNotRaced RowState = "not_raced"
	// StateSoak: the soak decided the value from a worker's memory growth (max_requests), not a race.
	StateSoak RowState = "soak"
	// StateNotMeasured: the soak that decides the value did not run or could not tell; the value is kept.
	StateNotMeasured RowState = "not_measured"
	// StateScreened: the screen counted every candidate doing the same work as the kept value: no timed trial.
	StateScreened RowState = "screened"
	// StateNoAlternative: there was no other value to try.
	StateNoAlternative RowState = "no_alternative"
)

// The words a row's Note opens with for its state, before the why: the Note people have read, kept as it was.
const (
	notTriedWords   = "not tried: "
	notRacedWords   = "not raced: "
	notMeasured     = "not measured: "
	notRemeasured   = "not re-measured: "
	pinnedWords     = "pinned"
	noAlternative   = "no alternative to try"
	noOtherSize     = "no other size fits"
	screenedOutNote = "screened out"
)

// because is r in state s: Reason holds why, the Note the state's words then why, so that the two agree.
func (r KnobRow) because(s RowState, words, why string) KnobRow {
	r.State, r.Reason, r.Note = s, why, words+why
	return r
}

// StateOf is r's state. A row read from a result.json written before rows carried one has only its verdict and
// note; they are read back here, and only here.
func (r KnobRow) StateOf() RowState {
	s, _ := r.stateAndReason()
	return s
}

// ReasonOf is why r is in its state, without the state's words ("" for a raced or pinned row); for an old row,
// read from its note as StateOf reads the state.
func (r KnobRow) ReasonOf() string {
	_, why := r.stateAndReason()
	return why
}

func (r KnobRow) stateAndReason() (RowState, string) {
	if r.State != "" {
		return r.State, r.Reason
	}
	return legacyState(r)
}

// legacyState reads an old row's state from its verdict and the words its note opened with then: "" where they
// say none (a race whose candidates were none in effect, whose note lists them).
func legacyState(r KnobRow) (RowState, string) {
	switch {
	case r.Verdict == Screened:
		return StateScreened, r.Note
	case r.Verdict != "" || r.Versus() != nil:
		return StateRaced, ""
	case r.Note == pinnedWords:
		return StatePinned, ""
	case r.Note == noAlternative || r.Note == noOtherSize:
		return StateNoAlternative, ""
	case strings.HasPrefix(r.Note, screenedOutNote):
		return StateScreened, r.Note
	}
	for _, p := range []struct {
		s     RowState
		words string
	}{{StateNotTried, notTriedWords}, {StateSoak, SoakNote}, {StateNotMeasured, notMeasured},
		{StateNotRaced, notRacedWords}, {StateNotRaced, notRemeasured}} {
		if why, ok := strings.CutPrefix(r.Note, p.words); ok {
			return p.s, why
		}
	}
	return "", ""
}

// screenFirst puts the screen's words on the candidates it took out before r's own words, in its Note and in its
// Reason where it has one (a reader shows the Reason in the Note's place).
func (r *KnobRow) screenFirst(notes []string) {
	join := func(s string) string {
		return strings.TrimSpace(strings.Join(append(notes[:len(notes):len(notes)], s), " "))
	}
	r.Note = join(r.Note)
	if r.Reason != "" {
		r.Reason = join(r.Reason)
	}
}
