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
	"sync/atomic"
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
}

// ErrStraceHung says strace did not detach when told to and was killed. The kernel detaches the tracees of a
// killed tracer, so the traced processes run on untraced; only this measurement is lost, and may be repeated.
var ErrStraceHung = errors.New("strace hung detaching")

// detachTimeout bounds a detach that is slow for any other reason than the vfork deadlock.
const detachTimeout = 10 * time.Second

// StartStrace attaches strace -c -f to pids (following their future children) and returns once every pid is
// attached, so that requests sent afterwards are all seen. Call Stop on every path.
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
		pgids: map[int]bool{}}
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
	// The reader must never block: strace writes an "attached" line for every child a traced process forks
	// (a dynamic pool, pm.max_requests), and a reader stuck on a full channel would block strace on its
	// stderr and exec's copy of it, so that Wait, and Stop, never return. It counts and nudges instead.
	var attached atomic.Int64
	nudge := make(chan struct{}, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			line := sc.Text()
			s.stderr.add(line)
			if strings.Contains(line, " attached") {
				attached.Add(1)
				select {
				case nudge <- struct{}{}:
				default:
				}
			}
		}
		io.Copy(io.Discard, pr)
	}()
	go func() {
		s.waitErr = s.cmd.Wait()
		pw.Close()
		close(s.done)
	}()
	want := int64(len(pids))
	timeout := time.NewTimer(10 * time.Second)
	defer timeout.Stop()
	for attached.Load() < want {
		select {
		case <-nudge:
		case <-s.done:
			s.cleanup()
			return nil, fmt.Errorf("strace exited before attaching: %s", s.stderr.last(3))
		case <-ctx.Done():
			s.Stop()
			return nil, ctx.Err()
		case <-timeout.C:
			s.Stop()
			return nil, fmt.Errorf("strace attached to %d of %d processes in 10 s: %s (ptrace restricted? see /proc/sys/kernel/yama/ptrace_scope)", attached.Load(), want, s.stderr.last(3))
		}
	}
	return s, nil
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
	sort.SliceStable(tab.Rows, func(i, j int) bool {
		if tab.Rows[i].Calls != tab.Rows[j].Calls {
			return tab.Rows[i].Calls > tab.Rows[j].Calls
		}
		return tab.Rows[i].Name < tab.Rows[j].Name
	})
	return tab, nil
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
