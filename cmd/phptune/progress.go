package main

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"unsafe"
)

// isTerminal reports whether f is a terminal (TCGETS succeeds).
func isTerminal(f *os.File) bool {
	var t syscall.Termios
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), syscall.TCGETS, uintptr(unsafe.Pointer(&t)))
	return errno == 0
}

// statusLine redraws one line on a terminal and does nothing elsewhere, unless PHPTUNE_PROGRESS=lines asks for
// every update as a plain line (a log or CI that follows the run).
type statusLine struct {
	f     *os.File
	on    bool
	lines bool // PHPTUNE_PROGRESS=lines and not a terminal
	last  int
	phase string // the last phase printed as a plain line
	said  string // the last update printed as a plain line (lines mode)
}

func newStatusLine(f *os.File) *statusLine {
	on := isTerminal(f)
	return &statusLine{f: f, on: on, lines: !on && os.Getenv("PHPTUNE_PROGRESS") == "lines"}
}

func (s *statusLine) set(format string, a ...any) {
	if s.lines {
		s.say(fmt.Sprintf(format, a...))
		return
	}
	if !s.on {
		return
	}
	msg := fmt.Sprintf(format, a...)
	pad := ""
	if n := s.last - len(msg); n > 0 {
		pad = strings.Repeat(" ", n)
	}
	fmt.Fprintf(s.f, "\r%s%s", msg, pad)
	s.last = len(msg)
}

// step shows the status on a terminal (or every update, PHPTUNE_PROGRESS=lines); elsewhere (a log, CI, nohup)
// it prints one plain line per phase, so that a run that is not watched still says where it was.
func (s *statusLine) step(phase, format string, a ...any) {
	if s.on || s.lines {
		s.set(format, a...)
		return
	}
	if phase == s.phase {
		return
	}
	s.phase = phase
	fmt.Fprintf(s.f, format+"\n", a...)
}

// say prints msg as a plain line unless it repeats the last one (an update that changed nothing).
func (s *statusLine) say(msg string) {
	if msg == s.said {
		return
	}
	s.said = msg
	fmt.Fprintln(s.f, msg)
}

// clear removes the line before normal output follows.
func (s *statusLine) clear() {
	if !s.on || s.last == 0 {
		return
	}
	fmt.Fprintf(s.f, "\r%s\r", strings.Repeat(" ", s.last))
	s.last = 0
}
