package tune

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/textline"
)

// TestProgressLinesSayTheBestSoFarInKnobWords runs the demo's decisions (the JIT better, the knee's pool of 4
// below Debian's 5, a static twin for every CPU race) and reads every progress line: the best so far in the
// summary's words, never the command line nor a race's twin or working pool size, and every line within 120
// columns.
func TestProgressLinesSayTheBestSoFarInKnobWords(t *testing.T) {
	var lines []string
	so := demoSim(1, 0.04, 3*time.Minute)
	so.Progress = func(s Status) { lines = append(lines, s.Line()) }
	res, err := Simulate(context.Background(), so)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) == 0 {
		t.Fatal("no progress line")
	}
	rec, base := res.Recommendation, knob.Debian()
	jit := knob.Shown("jit", rowsByName(res)["jit"].Value)
	sawJIT := false
	for _, l := range lines {
		if n := utf8.RuneCountInString(l); n > textline.Width {
			t.Errorf("%d columns: %s", n, l)
		}
		_, best, ok := strings.Cut(l, "  best so far: ")
		if !ok {
			t.Fatalf("no best so far: %s", l)
		}
		if strings.Contains(best, "-d ") || strings.Contains(best, "=") {
			t.Errorf("the best so far as a command line: %s", l)
		}
		if strings.Contains(best, "pm static") && rec.PM != "static" {
			t.Errorf("a twin's static pool as the best so far: %s", l)
		}
		if strings.Contains(best, "max_children") && !strings.Contains(best, "max_children "+knob.Shown("max_children", strconv.Itoa(rec.MaxChildren))) {
			t.Errorf("a pool size other than the recommendation's (%d) as the best so far: %s", rec.MaxChildren, l)
		}
		sawJIT = sawJIT || strings.Contains(best, "jit "+jit)
	}
	if rec.MaxChildren != base.MaxChildren && !strings.Contains(lines[len(lines)-1], "max_children") {
		t.Errorf("the pool's size changed (%d -> %d) and the last line does not say so: %s", base.MaxChildren, rec.MaxChildren, lines[len(lines)-1])
	}
	if !sawJIT {
		t.Errorf("no line says the JIT's change (jit %s): first %q, last %q", jit, lines[0], lines[len(lines)-1])
	}
	if !strings.HasSuffix(lines[0], "best so far: "+StartingWords) {
		t.Errorf("the first line's best so far is not the starting configuration: %s", lines[0])
	}
}

// TestProgressLineFitsAtAWord: a long detail is cut at a word's end with an ellipsis, never wrapped, and the best so
// far is kept whole.
func TestProgressLineFitsAtAWord(t *testing.T) {
	s := Status{Elapsed: 74 * time.Second, Budget: 3 * time.Minute, Phase: "second look validate_timestamps",
		Detail: strings.Repeat("validate_timestamps on against off left undecided; ", 3), Best: "jit tracing, opcache.jit_buffer_size 64M"}
	l := s.Line()
	if n := utf8.RuneCountInString(l); n > textline.Width || !strings.Contains(l, "…  best so far: ") {
		t.Fatalf("%d columns, want at most %d, the detail cut with an ellipsis: %s", n, textline.Width, l)
	}
	if !strings.HasSuffix(l, "best so far: "+s.Best) {
		t.Errorf("the best so far cut: %s", l)
	}
	if strings.HasSuffix(l, " …") || strings.Contains(l, "undecid…") {
		t.Errorf("cut inside a word or before a space: %s", l)
	}
}
