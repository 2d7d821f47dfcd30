package tune

import "testing"

// A row carries its comparison as data; an old row's words are read back the way the reports read them.
func TestARowsComparisonIsItsDataBeforeItsWords(t *testing.T) {
	for _, c := range []struct {
		name string
		row  KnobRow
		want *Versus
	}{
		{"data", KnobRow{Name: "jit", Vs: &Versus{Knob: "jit", B: "tracing", A: ""}}, &Versus{"jit", "tracing", ""}},
		// The data wins over words that would split elsewhere: a value containing " vs ".
		{"data, words unread", KnobRow{Name: "x", Vs: &Versus{Knob: "x", B: "a vs b", A: "c"}, Compared: "x=a vs b vs c"},
			&Versus{"x", "a vs b", "c"}},
		{"old words", KnobRow{Name: "opcache", Compared: "opcache=off vs on"}, &Versus{"opcache", "off", "on"}},
		{"old words, unset", KnobRow{Name: "jit", Compared: "jit=(unset) vs tracing"}, &Versus{"jit", "", "tracing"}},
		{"old words, another knob", KnobRow{Name: "jit", Compared: "opcache=off vs on"}, nil},
		{"old words, no vs", KnobRow{Name: "jit", Compared: "jit=off"}, nil},
		{"not compared", KnobRow{Name: "jit"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := c.row.Versus()
			if (got == nil) != (c.want == nil) || got != nil && *got != *c.want {
				t.Fatalf("Versus() = %+v, want %+v", got, c.want)
			}
		})
	}
}

// The words a row is given say what its data says, as rows said it before they carried data.
func TestARowsWordsAreItsData(t *testing.T) {
	var r KnobRow
	r.setVersus("jit", "", "tracing")
	if r.Compared != "jit=(unset) vs tracing" || r.Vs == nil || *r.Vs != (Versus{"jit", "", "tracing"}) {
		t.Fatalf("row %+v, vs %+v", r, r.Vs)
	}
	if s := (*Versus)(nil).String(); s != "" {
		t.Fatalf("nil says %q", s)
	}
}
