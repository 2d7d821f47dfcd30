package measure

// Attaching strace to a php-fpm pool whose workers come and go (pm.max_requests, dynamic and ondemand pools): a
// worker listed a moment ago may have exited before strace reaches it, and the master may fork one that no
// listing saw. What is alive is attached, what is gone is let go, and what was born untraced is caught.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// GroupTrace is strace attached to a whole process group: one strace on the leader, following its children,
// and, when the leader had children before that, further ones on those (one, as a rule).
type GroupTrace struct {
	traces []*Strace
}

// TraceGroup attaches strace -c -f to the process group led by leader (php-fpm's master and its workers) and
// returns once every live process of the group is traced. The leader comes first, alone, so that from then on
// what it forks is followed; the group is listed only after that, and again until two listings a moment apart
// find every process traced (a fork under way as strace seized its parent makes an untraced child). Workers
// that exited before strace reached them are let go.
func TraceGroup(ctx context.Context, leader int) (*GroupTrace, error) {
	lead, err := StartStrace(ctx, []int{leader})
	if err != nil {
		return nil, err
	}
	g := &GroupTrace{traces: []*Strace{lead}}
	if err := g.attachRest(ctx, leader); err != nil {
		g.Stop()
		return nil, err
	}
	return g, nil
}

// restTries bounds the further straces attachRest starts: one is the rule; another is for a worker that no
// strace traced at the second listing (forked while its parent's strace was being attached) or one whose pid a
// new worker took between listing and attaching.
const restTries = 3

// forkSettle is how long attachRest looks again after a listing found every process traced: a fork under way
// when strace seized the parent was let go untraced by the kernel, and its child shows in /proc only once the
// fork is done, which on a loaded machine can take milliseconds (at 50 ms, beside a busy loop, a test found a
// child of the old worker untraced once in about 40 traces).
const forkSettle = 200 * time.Millisecond

// attachRest attaches further straces to the group's processes that none traces yet, until two listings a
// moment apart find none. A strace that fails on processes that have since gone, or been traced, is no
// failure: the next listing says.
func (g *GroupTrace) attachRest(ctx context.Context, leader int) error {
	var lastErr error
	settled := false
	for try := 0; try < restTries; {
		rest, err := g.untraced(leader)
		switch {
		case err != nil:
			return err
		case len(rest) == 0 && settled:
			return nil
		case len(rest) == 0:
			settled = true
			if err := sleepCtx(ctx, forkSettle); err != nil {
				return err
			}
			continue
		}
		settled = false
		try++
		s, err := StartStrace(ctx, rest)
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, errAllExited):
			// they were exiting: nothing left of them to trace
		case err != nil:
			lastErr = err
		default:
			g.traces = append(g.traces, s)
		}
	}
	missed, err := g.untraced(leader)
	if err != nil || len(missed) > 0 {
		return errors.Join(err, lastErr, fmt.Errorf("processes %v of group %d are traced by no strace after %d tries",
			missed, leader, restTries))
	}
	return nil
}

// sleepCtx waits d, or less when ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// untraced lists the live processes of the group that none of g's straces traces. Zombies serve nothing.
func (g *GroupTrace) untraced(pgid int) ([]int, error) {
	groups, _, err := scanGroups(map[int]bool{pgid: true}, make([]byte, 4096))
	if err != nil {
		return nil, fmt.Errorf("list the processes of group %d: %w", pgid, err)
	}
	var missed []int
	for _, st := range groups[pgid] {
		if st.state == 'Z' || st.state == 'X' {
			continue
		}
		tracer, err := tracerPID(st.pid)
		if isGone(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if !slices.ContainsFunc(g.traces, func(s *Strace) bool { return s.cmd.Process.Pid == tracer }) {
			missed = append(missed, st.pid)
		}
	}
	return missed, nil
}

// Processes counts the processes traced so far, children followed included.
func (g *GroupTrace) Processes() int {
	n := 0
	for _, s := range g.traces {
		n += s.Processes()
	}
	return n
}

// Stop stops every strace and adds their summaries up. An error wraps ErrStraceHung when one of them hung.
func (g *GroupTrace) Stop() (*SyscallTable, error) {
	var tabs []*SyscallTable
	var firstErr error
	for _, s := range g.traces {
		tab, err := s.Stop()
		if err != nil && firstErr == nil {
			firstErr = err
		}
		tabs = append(tabs, tab)
	}
	if firstErr != nil {
		return nil, firstErr
	}
	return mergeTables(tabs), nil
}

// mergeTables adds strace summaries up, call by call.
func mergeTables(tabs []*SyscallTable) *SyscallTable {
	by := map[string]*SyscallCount{}
	out := &SyscallTable{}
	for _, t := range tabs {
		out.TotalCalls += t.TotalCalls
		out.TotalErrors += t.TotalErrors
		for _, r := range t.Rows {
			if c := by[r.Name]; c != nil {
				c.Calls, c.Errors, c.Seconds = c.Calls+r.Calls, c.Errors+r.Errors, c.Seconds+r.Seconds
				continue
			}
			c := r
			by[r.Name] = &c
		}
	}
	for _, c := range by {
		out.Rows = append(out.Rows, *c)
	}
	sortRows(out.Rows)
	return out
}

// tracerPID reads TracerPid from /proc/PID/status (0: not traced).
func tracerPID(pid int) (int, error) {
	b, err := readProcFile(procPath(pid, "status"), nil)
	if err != nil {
		return 0, gone(pid, err)
	}
	_, rest, ok := bytes.Cut(b, []byte("\nTracerPid:"))
	if !ok {
		return 0, fmt.Errorf("process %d: no TracerPid in its status", pid)
	}
	line, _, _ := bytes.Cut(rest, []byte("\n"))
	n, err := strconv.Atoi(string(bytes.TrimSpace(line)))
	if err != nil {
		return 0, fmt.Errorf("process %d: TracerPid %q: %w", pid, line, err)
	}
	return n, nil
}

// attachLog follows strace's "attached" and "attach: ..." lines for the pids it was given. Followed children
// announce themselves too and are counted in procs.
type attachLog struct {
	mu     sync.Mutex
	want   map[int]bool
	ok     map[int]bool   // attached, among want
	failed map[int]string // strace's reason, among want
	procs  int            // every process attached, followed children included
}

func newAttachLog(pids []int) *attachLog {
	a := &attachLog{want: map[int]bool{}, ok: map[int]bool{}, failed: map[int]string{}}
	for _, p := range pids {
		a.want[p] = true
	}
	return a
}

// add reads one line of strace's stderr and tells whether it was about attaching.
func (a *attachLog) add(line string) bool {
	pid, ok, reason, isAttach := parseAttachLine(line)
	if !isAttach {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if ok {
		a.procs++
	}
	if !a.want[pid] || a.ok[pid] || a.failed[pid] != "" {
		return true
	}
	if ok {
		a.ok[pid] = true
	} else {
		a.failed[pid] = reason
	}
	return true
}

// settled tells whether every pid given was attached or failed, and how many were attached.
func (a *attachLog) settled() (bool, int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.ok)+len(a.failed) >= len(a.want), len(a.ok)
}

// parseAttachLine reads strace 6.1's "strace: Process 123 attached" (or "... attached with 3 threads") and
// "strace: attach: ptrace(PTRACE_SEIZE, 123): No such process".
func parseAttachLine(line string) (pid int, ok bool, reason string, isAttach bool) {
	if _, rest, found := strings.Cut(line, "Process "); found {
		num, tail, _ := strings.Cut(rest, " ")
		if n, err := strconv.Atoi(num); err == nil && strings.HasPrefix(tail, "attached") {
			return n, true, "", true
		}
	}
	if _, rest, found := strings.Cut(line, "attach: ptrace("); found {
		_, rest, _ = strings.Cut(rest, ", ")
		num, why, _ := strings.Cut(rest, "): ")
		if n, err := strconv.Atoi(num); err == nil {
			return n, false, why, true
		}
	}
	return 0, false, "", false
}

// errAllExited says every pid given to strace had exited before it reached them.
var errAllExited = errors.New("every process had exited")

// alive tells whether pid is a process that could still run (not gone, not a zombie).
func alive(pid int) bool {
	st, _, err := readStat(pid, nil)
	return err == nil && st.state != 'Z' && st.state != 'X'
}
