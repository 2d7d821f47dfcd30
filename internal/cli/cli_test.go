package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestArgs: a command's missing or extra arguments named in words.
func TestArgs(t *testing.T) {
	cmd := &cobra.Command{Use: "bench"}
	one := Args(1, 1, "TARGET, the address to load")
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "bench: missing TARGET, the address to load (see bench --help)"},
		{[]string{"a", "b c"}, "bench takes TARGET, the address to load; got 2: a b c (quote an argument with spaces)"},
		{[]string{"a"}, ""},
	} {
		got := ""
		if err := one(cmd, c.args); err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("%q: %q, want %q", c.args, got, c.want)
		}
	}
	if err := Args(0, 0, "")(cmd, []string{"x"}); err == nil || !strings.Contains(err.Error(), "takes no arguments") {
		t.Errorf("no arguments: %v", err)
	}
}

func TestUnknownCommand(t *testing.T) {
	got := UnknownCommand("unknown command \"tuen\" for \"phptune\"\n\nDid you mean this?\n\ttune\n\n")
	if got != `unknown command "tuen" for "phptune" (did you mean tune?)` {
		t.Errorf("%q", got)
	}
}

// TestOpenOut: no --out locks nothing; a directory in use by another run is refused.
func TestOpenOut(t *testing.T) {
	release, err := OpenOut("")
	if err != nil {
		t.Fatal(err)
	}
	release()
	dir := filepath.Join(t.TempDir(), "out")
	release, err = OpenOut(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := OpenOut(dir); err == nil || !strings.Contains(err.Error(), "in use by another phptune run") {
		t.Errorf("a locked dir: %v", err)
	}
	release()
	if release, err := OpenOut(dir); err != nil {
		t.Errorf("after release: %v", err)
	} else {
		release()
	}
}

// TestRate: --rate is requests a second or peak.
func TestRate(t *testing.T) {
	var rate float64
	var peak bool
	r := Rate{&rate, &peak}
	if err := r.Set("peak"); err != nil || !peak || r.String() != "peak" {
		t.Errorf("peak: %v, %v", peak, err)
	}
	if err := r.Set("300"); err != nil || peak || rate != 300 || r.String() != "300" {
		t.Errorf("300: %v %v, %v", rate, peak, err)
	}
	for _, bad := range []string{"0", "-1", "fast", "+Inf"} {
		if err := r.Set(bad); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}
