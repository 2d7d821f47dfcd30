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

// statusLine redraws one line on a terminal and does nothing elsewhere.
type statusLine struct {
	f     *os.File
	on    bool
	last  int
	phase string // the last phase printed as a plain line
}

func newStatusLine(f *os.File) *statusLine { return &statusLine{f: f, on: isTerminal(f)} }

func (s *statusLine) set(format string, a ...any) {
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

// step shows the status on a terminal; elsewhere (a log, CI, nohup) it prints one plain line per phase, so that
// a run that is not watched still says where it was.
func (s *statusLine) step(phase, format string, a ...any) {
	if s.on {
		s.set(format, a...)
		return
	}
	if phase == s.phase {
		return
	}
	s.phase = phase
	fmt.Fprintf(s.f, format+"\n", a...)
}

// clear removes the line before normal output follows.
func (s *statusLine) clear() {
	if !s.on || s.last == 0 {
		return
	}
	fmt.Fprintf(s.f, "\r%s\r", strings.Repeat(" ", s.last))
	s.last = 0
}
