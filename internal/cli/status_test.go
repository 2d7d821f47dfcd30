package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestStatusLineLines: off a terminal the status line says nothing and tune's steps one line a phase, unless
// PHPTUNE_PROGRESS=lines asks for every distinct update as its own line.
func TestStatusLineLines(t *testing.T) {
	for _, c := range []struct {
		env, want string
	}{
		{"", "tune: knob a round 1\ntune: knob b round 1\n"},
		{"lines", "bench: 1 requests\nbench: 2 requests\ntune: knob a round 1\ntune: knob a round 2\ntune: knob b round 1\n"},
	} {
		t.Setenv("PHPTUNE_PROGRESS", c.env)
		f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
		if err != nil {
			t.Fatal(err)
		}
		s := NewStatusLine(f)
		s.Set("bench: %d requests", 1)
		s.Set("bench: %d requests", 1) // nothing new: not said again
		s.Set("bench: %d requests", 2)
		s.Step("knob a", "tune: knob a round %d", 1)
		s.Step("knob a", "tune: knob a round %d", 2)
		s.Step("knob b", "tune: knob b round %d", 1)
		s.Clear()
		f.Close()
		if got, _ := os.ReadFile(f.Name()); string(got) != c.want {
			t.Errorf("PHPTUNE_PROGRESS=%q: printed\n%s\nwant\n%s", c.env, got, c.want)
		}
	}
}

// TestStatusLineFitsTheTerminal: on a terminal a long update is cut to Width columns at a word, and a shorter one
// after it is padded over the longer one's columns only, so that neither wraps.
func TestStatusLineFitsTheTerminal(t *testing.T) {
	var b strings.Builder
	s := &StatusLine{w: &b, on: true}
	s.Set("tune: %s", strings.Repeat("word ", 40))
	s.Set("tune: short")
	for _, l := range strings.Split(b.String(), "\r")[1:] {
		if n := utf8.RuneCountInString(l); n > Width {
			t.Errorf("%d columns drawn: %q", n, l)
		}
	}
	if first := strings.Split(b.String(), "\r")[1]; !strings.HasSuffix(first, "word…") {
		t.Errorf("not cut at a word with an ellipsis: %q", first)
	}
}
