package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/phptune/phptune/internal/clock"
	"github.com/phptune/phptune/internal/textline"
)

// isTerminal reports whether w is a terminal (TCGETS succeeds).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	var t syscall.Termios
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), syscall.TCGETS, uintptr(unsafe.Pointer(&t)))
	return errno == 0
}

// StatusLine redraws one line on a terminal and does nothing elsewhere, unless PHPTUNE_PROGRESS=lines asks for
// every update as a plain line (a log or CI that follows the run).
type StatusLine struct {
	w     io.Writer
	on    bool
	lines bool // PHPTUNE_PROGRESS=lines and not a terminal
	last  int
	phase string // the last phase printed as a plain line
	said  string // the last update printed as a plain line (lines mode)
}

// NewStatusLine is a status line on w (stderr).
func NewStatusLine(w io.Writer) *StatusLine {
	on := isTerminal(w)
	return &StatusLine{w: w, on: on, lines: !on && os.Getenv("PHPTUNE_PROGRESS") == "lines"}
}

// On says whether the line is redrawn on a terminal.
func (s *StatusLine) On() bool { return s.on }

// Lines says whether every update is printed as a plain line (PHPTUNE_PROGRESS=lines).
func (s *StatusLine) Lines() bool { return s.lines }

// Set shows the status.
func (s *StatusLine) Set(format string, a ...any) {
	if s.lines {
		s.say(fmt.Sprintf(format, a...))
		return
	}
	if !s.on {
		return
	}
	// Cut to the width: a line longer than the terminal wraps, and a wrapped line is not redrawn but repeated.
	// Columns are counted in runes, as the terminal counts them ("…" is one).
	msg := textline.Fit(fmt.Sprintf(format, a...), Width)
	cols := utf8.RuneCountInString(msg)
	pad := ""
	if n := s.last - cols; n > 0 {
		pad = strings.Repeat(" ", n)
	}
	fmt.Fprintf(s.w, "\r%s%s", msg, pad)
	s.last = cols
}

// Step shows the status on a terminal (or every update, PHPTUNE_PROGRESS=lines); elsewhere (a log, CI, nohup)
// it prints one plain line per phase, so that a run that is not watched still says where it was.
func (s *StatusLine) Step(phase, format string, a ...any) {
	if s.on || s.lines {
		s.Set(format, a...)
		return
	}
	if phase == s.phase {
		return
	}
	s.phase = phase
	fmt.Fprintf(s.w, format+"\n", a...)
}

// say prints msg as a plain line unless it repeats the last one (an update that changed nothing).
func (s *StatusLine) say(msg string) {
	if msg == s.said {
		return
	}
	s.said = msg
	fmt.Fprintln(s.w, msg)
}

// Clear removes the line before normal output follows.
func (s *StatusLine) Clear() {
	if !s.on || s.last == 0 {
		return
	}
	fmt.Fprintf(s.w, "\r%s\r", strings.Repeat(" ", s.last))
	s.last = 0
}

// Steps shows a run's current step (what: "build") and its elapsed time on line, redrawn every half second, and
// marks each step in log; stop ends the redrawing and clears the line.
func Steps(line *StatusLine, log io.Writer, what string) (onStep func(variant, step string), stop func()) {
	var mu sync.Mutex
	var step string
	var since time.Time
	onStep = func(variant, s string) {
		mu.Lock()
		step, since = variant+": "+s, time.Now()
		mu.Unlock()
		fmt.Fprintf(log, "\n== %s: %s (%s)\n", variant, s, time.Now().Format(time.TimeOnly))
	}
	redraw := clock.Every(500*time.Millisecond, func(now time.Time) {
		mu.Lock()
		if step != "" {
			line.Set("%s %s (%s)", what, step, now.Sub(since).Round(time.Second))
		}
		mu.Unlock()
	})
	return onStep, func() {
		redraw()
		line.Clear()
	}
}
