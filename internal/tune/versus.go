package tune

import (
	"fmt"
	"strings"
)

// Versus is what a knob's row was compared on: the knob, the value the row's effect, interval and verdict are
// of (the candidate, B) and the value it was compared against (the incumbent, A), raw as the knob holds them
// ("" is a value: the setting left unset). Readers take the values from here, never from the row's words, so
// that a value containing " vs " or "(unset)" cannot change what a report says.
type Versus struct {
	Knob string `json:"knob"`
	B    string `json:"b"` // the value the effect is of
	A    string `json:"a"` // the value it was compared against
}

// String is v in words, "NAME=B vs A" with "(unset)" for the empty value: KnobRow.Compared. "" for nil.
func (v *Versus) String() string {
	if v == nil {
		return ""
	}
	return fmt.Sprintf("%s=%s vs %s", v.Knob, orUnset(v.B), orUnset(v.A))
}

// setVersus records that r's effect is of b against a, as data (Vs) and in words (Compared, for a person
// reading result.json), so that the two cannot disagree.
func (r *KnobRow) setVersus(knob, b, a string) {
	r.Vs = &Versus{Knob: knob, B: b, A: a}
	r.Compared = r.Vs.String()
}

// Versus is what r was compared on, nil when it was not compared. A row read from a result.json written before
// rows carried Vs has only the words; they are read back here, and only here.
func (r KnobRow) Versus() *Versus {
	if r.Vs != nil {
		return r.Vs
	}
	return legacyVersus(r.Name, r.Compared)
}

// legacyVersus reads an old row's Compared, "NAME=B vs A" ("(unset)" for the empty value): nil when it is
// empty or does not name the row's knob. The last " vs " splits, as the reports read it before rows had Vs.
func legacyVersus(name, s string) *Versus {
	rest, found := strings.CutPrefix(s, name+"=")
	if !found {
		return nil
	}
	b, a, found := cutLast(rest, " vs ")
	if !found {
		return nil
	}
	unset := func(v string) string {
		if v == "(unset)" {
			return ""
		}
		return v
	}
	return &Versus{Knob: name, B: unset(b), A: unset(a)}
}

// cutLast is strings.Cut at the last sep.
func cutLast(s, sep string) (before, after string, found bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}
