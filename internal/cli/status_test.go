package cli

import (
	"os"
	"path/filepath"
	"testing"
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
