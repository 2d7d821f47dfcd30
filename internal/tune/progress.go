package tune

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/textline"
)

// Status is the progress line's content.
type Status struct {
	Elapsed, Budget time.Duration
	Phase           string // "saturation", "knob pm", "final", ...
	Detail          string
	// Best is what the best configuration so far changes from the starting one, in the summary's words
	// ("jit tracing"), or "the starting configuration": never its command line, never a race's twin.
	Best string
}

// minDetail is the least of a progress line kept for its phase and detail before the best so far is cut instead.
const minDetail = 48

// StartingWords is Status.Best when the best so far changes nothing.
const StartingWords = "the starting configuration"

// Line is the status as one line of at most textline.Width columns, cut at a word where it is longer.
func (s Status) Line() string {
	line := fmt.Sprintf("tune: %s/%s  %s: %s", s.Elapsed.Round(time.Second), s.Budget, s.Phase, s.Detail)
	best := "  best so far: " + s.Best
	// The detail is cut first: the best so far is what the line is read for.
	if room := textline.Width - utf8.RuneCountInString(best); utf8.RuneCountInString(line) > room && room >= minDetail {
		line = textline.Fit(line, room)
	}
	return textline.Fit(line+best, textline.Width)
}

// bestWords says what the best configuration so far changes from the starting one, knob by knob, among the
// knobs decided so far (those with a row). A knob not yet decided is left out though the best holds a working
// value for it: the CPU races run at the knee's pool size, which the pool's race decides later, and a line that
// showed it would say 4 during those races and 5 once the starting size is kept.
func (t *tuner) bestWords() string {
	var out []string
	seen := map[string]bool{}
	for _, e := range t.log.knobs {
		row := e.row
		if seen[row.Name] {
			continue
		}
		seen[row.Name] = true
		k := t.knobNamed(row.Name)
		if v := k.Get(t.best); v != k.Get(t.o.Base) {
			out = append(out, row.Name+" "+knob.Shown(row.Name, v))
		}
	}
	if len(out) == 0 {
		return StartingWords
	}
	return strings.Join(out, ", ")
}

// knobNamed is the run's knob of that name; else the known one, the pool's size, or a pool's ini setting.
func (t *tuner) knobNamed(name string) knob.Knob {
	for _, k := range t.o.Knobs {
		if k.Name == name {
			return k
		}
	}
	if k := knob.MaxChildren(); k.Name == name {
		return k
	}
	if k, ok := knob.ByName(name); ok {
		return k
	}
	return knob.INI(name)
}
