package measure

// System calls counted with strace -c, attached to running processes (a php-fpm pool's master and workers) for
// as long as the caller sends a fixed number of requests. strace runs in its own process group with Pdeathsig,
// so it is stopped (and its tracees detached) on every path, phptune's own death included.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/phptune/phptune/internal/procgroup"
)

// SyscallCount is one row of strace -c's summary.
type SyscallCount struct {
	Name    string  `json:"name"`
	Calls   int64   `json:"calls"`
	Errors  int64   `json:"errors"`
	Seconds float64 `json:"seconds"` // time inside the call as strace saw it (inflated by tracing)
}

// SyscallTable is strace -c's summary: rows sorted by calls, descending, and the total.
type SyscallTable struct {
	Rows        []SyscallCount `json:"rows"`
	TotalCalls  int64          `json:"total_calls"`
	TotalErrors int64          `json:"total_errors"`
}

// Strace is a running strace -c attached to processes.
type Strace struct {
	cmd      *exec.Cmd
	out      string
	dir      string
	done     chan struct{}
	waitErr  error
	stopOnce sync.Once
	stderr   *lockedBuffer
	pgids    map[int]bool // the traced processes' groups, where their children are too
	log      *attachLog
	readDone chan struct{} // closed once strace's stderr is read to its end
}

// ErrStraceHung says strace did not detach when told to and was killed. The kernel detaches the tracees of a
// killed tracer, so the traced processes run on untraced; only this measurement is lost, and may be repeated.
var ErrStraceHung = errors.New("strace hung detaching")

// detachTimeout bounds a detach that is slow for any other reason than the vfork deadlock.
const detachTimeout = 10 * time.Second

// StartStrace attaches strace -c -f to pids (following their future children) and returns once each pid is
// attached or gone, so that requests sent afterwards are all seen. A pid that exited (or is a zombie) before
// strace reached it is let go: workers recycle; one alive that could not be attached is an error. Call Stop on
// every path.
func StartStrace(ctx context.Context, pids []int) (*Strace, error) {
	if len(pids) == 0 {
		return nil, errors.New("strace: no process to attach to")
	}
	bin, err := FindStrace()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "phptune-strace-")
	if err != nil {
		return nil, err
	}
	s := &Strace{out: filepath.Join(dir, "summary.txt"), dir: dir, done: make(chan struct{}), stderr: &lockedBuffer{},
		pgids: map[int]bool{}, log: newAttachLog(pids), readDone: make(chan struct{})}
	for _, p := range pids {
		if st, _, err := readStat(p, nil); err == nil {
			s.pgids[st.pgrp] = true
		}
	}
	// -c: counts only; -f: follow children the master forks (dynamic and ondemand pools); -qq would hide the
	// "attached" lines we wait for, so the default verbosity stays.
	args := []string{"-c", "-f", "-o", s.out}
	for _, p := range pids {
		args = append(args, "-p", strconv.Itoa(p))
	}
	s.cmd = exec.Command(bin, args...)
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	pr, pw := io.Pipe()
	s.cmd.Stderr = pw
	if err := s.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start strace: %w", err)
	}
	nudge := s.readStderr(pr)
	go func() {
		s.waitErr = s.cmd.Wait()
		pw.Close()
		close(s.done)
	}()
	if err := s.waitAttached(ctx, nudge); err != nil {
		return nil, err
	}
	if err := s.checkFailed(); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// readStderr keeps strace's last lines and follows its attach lines. The reader must never block: strace
// writes an "attached" line for every child a traced process forks (a dynamic pool, pm.max_requests), and a
// reader stuck on a full channel would block strace on its stderr and exec's copy of it, so that Wait, and
// Stop, never return. It records and nudges instead.
func (s *Strace) readStderr(pr *io.PipeReader) <-chan struct{} {
	nudge := make(chan struct{}, 1)
	go func() {
		defer close(s.readDone)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			line := sc.Text()
			s.stderr.add(line)
			if s.log.add(line) {
				select {
				case nudge <- struct{}{}:
				default:
				}
			}
		}
		io.Copy(io.Discard, pr)
	}()
	return nudge
}

// waitAttached waits until strace has attached to, or given up on, every pid it was given.
func (s *Strace) waitAttached(ctx context.Context, nudge <-chan struct{}) error {
	timeout := time.NewTimer(10 * time.Second)
	defer timeout.Stop()
	for {
		done, n := s.log.settled()
		if done {
			return nil
		}
		select {
		case <-nudge:
		case <-s.done:
			return s.exitedEarly()
		case <-ctx.Done():
			s.Stop()
			return ctx.Err()
		case <-timeout.C:
			s.Stop()
			return fmt.Errorf("strace attached to %d of %d processes in 10 s: %s (ptrace restricted? see /proc/sys/kernel/yama/ptrace_scope)",
				n, len(s.log.want), s.stderr.last(3))
		}
	}
}

// exitedEarly tells why strace exited before the caller had it: it does so once it traces nothing, and what it
// attached may have exited already (a worker on its last request). Its summary then stands for Stop.
func (s *Strace) exitedEarly() error {
	<-s.readDone
	done, n := s.log.settled()
	switch {
	case done && n > 0:
		return nil
	case done:
		s.cleanup()
		return fmt.Errorf("strace attached to none of %d processes: %w", len(s.log.want), errAllExited)
	}
	s.cleanup()
	return fmt.Errorf("strace exited before attaching: %s", s.stderr.last(3))
}

// checkFailed lets go of the pids strace could not attach to because they exited, and fails on one still alive.
func (s *Strace) checkFailed() error {
	s.log.mu.Lock()
	defer s.log.mu.Unlock()
	for pid, why := range s.log.failed {
		if alive(pid) {
			return fmt.Errorf("strace could not attach to process %d: %s (ptrace restricted? see /proc/sys/kernel/yama/ptrace_scope)", pid, why)
		}
	}
	if len(s.log.ok) == 0 {
		return fmt.Errorf("strace attached to none of %d processes: %w", len(s.log.want), errAllExited)
	}
	return nil
}

// attached tells whether strace attached to pid at its start.
func (s *Strace) attached(pid int) bool {
	s.log.mu.Lock()
	defer s.log.mu.Unlock()
	return s.log.ok[pid]
}

// Processes counts the processes strace traced so far: those attached at its start and the children it followed.
func (s *Strace) Processes() int {
	s.log.mu.Lock()
	defer s.log.mu.Unlock()
	return s.log.procs
}

// Stop detaches strace (SIGINT makes it detach and write its summary) and returns the summary. A strace that
// does not finish is killed with its process group, and Stop returns an error wrapping ErrStraceHung.
func (s *Strace) Stop() (*SyscallTable, error) {
	var tab *SyscallTable
	var err error
	s.stopOnce.Do(func() {
		_ = s.cmd.Process.Signal(syscall.SIGINT)
		err = s.waitDetached()
		_ = procgroup.Kill(s.cmd.Process.Pid) // anything left of its group
		if err == nil {
			var f *os.File
			if f, err = os.Open(s.out); err == nil {
				tab, err = ParseStraceSummary(f)
				f.Close()
			}
			if err != nil {
				err = fmt.Errorf("strace summary: %w (strace said: %s)", err, s.stderr.last(3))
			}
		}
		s.cleanup()
	})
	return tab, err
}

// waitDetached waits for strace to exit after SIGINT. Debian bookworm's strace 6.1 can wait forever instead: when
// a traced process is inside vfork, its child stopped at strace's attach, strace waits for the parent to stop
// before it looks at the child (strace/strace#277, fixed in 6.7). That deadlock is recognised within a second and
// strace killed at once; anything else slow is killed after detachTimeout.
func (s *Strace) waitDetached() error {
	deadline := time.NewTimer(detachTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for polls := 1; ; polls++ {
		select {
		case <-s.done:
			return nil
		case <-deadline.C:
			s.kill()
			return fmt.Errorf("%w: not within %v, so it was killed (the processes run on, untraced)", ErrStraceHung, detachTimeout)
		case <-tick.C:
			if polls >= 4 && vforkDeadlock(s.pgids) {
				s.kill()
				return fmt.Errorf("%w: a traced process waits in vfork for a child strace holds (strace 6.1's bug, "+
					"strace/strace#277), so it was killed (the processes run on, untraced)", ErrStraceHung)
			}
		}
	}
}

// kill kills strace's group and waits for it: the kernel then detaches and resumes every tracee.
func (s *Strace) kill() {
	_ = procgroup.Kill(s.cmd.Process.Pid)
	<-s.done
}

// vforkDeadlock tells whether, in the traced groups, a process waits uninterruptibly (vfork) while its child
// sits in a tracing stop: the picture of strace 6.1's detach deadlock.
func vforkDeadlock(pgids map[int]bool) bool {
	groups, _, err := scanGroups(pgids, make([]byte, 4096))
	if err != nil {
		return false
	}
	waiting := map[int]bool{}
	var held []statLine
	for _, g := range groups {
		for _, st := range g {
			switch st.state {
			case 'D':
				waiting[st.pid] = true
			case 't':
				held = append(held, st)
			}
		}
	}
	for _, st := range held {
		if waiting[st.ppid] {
			return true
		}
	}
	return false
}

func (s *Strace) cleanup() { os.RemoveAll(s.dir) }

// ParseStraceSummary parses strace -c's table (strace 6.1):
//
//	% time     seconds  usecs/call     calls    errors syscall
//	------ ----------- ----------- --------- --------- ----------------
//	 39.51    0.000427           4        96           read
//	...
//	100.00    0.001081           5       203        12 total
//
// The errors column is blank for calls that never failed. When it saw no call at all, strace writes nothing.
func ParseStraceSummary(r io.Reader) (*SyscallTable, error) {
	sc := bufio.NewScanner(r)
	tab := &SyscallTable{}
	header, total, any := false, false, false
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		any = any || line != ""
		if strings.HasPrefix(line, "% time") {
			header = true
			continue
		}
		if !header || line == "" || strings.HasPrefix(line, "---") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 5 || len(f) > 6 {
			return nil, fmt.Errorf("unexpected line %q", line)
		}
		row := SyscallCount{Name: f[len(f)-1]}
		var err error
		if row.Seconds, err = strconv.ParseFloat(f[1], 64); err != nil {
			return nil, fmt.Errorf("line %q: seconds: %w", line, err)
		}
		if row.Calls, err = strconv.ParseInt(f[3], 10, 64); err != nil {
			return nil, fmt.Errorf("line %q: calls: %w", line, err)
		}
		if len(f) == 6 {
			if row.Errors, err = strconv.ParseInt(f[4], 10, 64); err != nil {
				return nil, fmt.Errorf("line %q: errors: %w", line, err)
			}
		}
		if row.Name == "total" {
			tab.TotalCalls, tab.TotalErrors = row.Calls, row.Errors
			total = true
			continue
		}
		tab.Rows = append(tab.Rows, row)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if !any {
		return tab, nil // strace writes nothing when it saw no call
	}
	if !header || !total {
		return nil, errors.New("no summary table")
	}
	sortRows(tab.Rows)
	return tab, nil
}

// sortRows sorts by calls, descending, then by name.
func sortRows(rows []SyscallCount) {
	sort.SliceStable(rows, func(i, j int) bool {
		if rows[i].Calls != rows[j].Calls {
			return rows[i].Calls > rows[j].Calls
		}
		return rows[i].Name < rows[j].Name
	})
}

// lockedBuffer keeps the last lines a process wrote.
type lockedBuffer struct {
	mu    sync.Mutex
	lines []string
}

func (b *lockedBuffer) add(l string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.lines = append(b.lines, l)
	if len(b.lines) > 50 {
		b.lines = b.lines[len(b.lines)-50:]
	}
}

func (b *lockedBuffer) last(n int) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	l := b.lines
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, " / ")
}
