package measure

import (
	"bytes"
	"fmt"
	"strconv"
	"time"
)

// GroupCPU is the CPU time the processes of group pgid have used so far: the scheduler's own clock of each
// member (/proc/PID/schedstat, nanoseconds) plus what the members' reaped children used (cutime+cstime, in
// ticks: only workers that exited). Read before and after a fixed number of requests, it gives what a request
// costs in CPU to the nanosecond, where /proc/PID/stat's 10 ms ticks would blur a 3 ms request.
func GroupCPU(pgid int) (time.Duration, error) {
	s, err := GroupSched(pgid)
	return s.CPU, err
}

// Sched is what the scheduler counted for a group so far: its CPU time and the time its members waited on a
// run queue, ready to run while others held the CPUs (schedstat's second field; reaped children's wait is not
// kept by the kernel).
type Sched struct {
	CPU      time.Duration
	RunDelay time.Duration
}

// GroupSched reads the CPU time and the run-queue wait of the processes of group pgid (see GroupCPU).
func GroupSched(pgid int) (Sched, error) {
	groups, buf, err := scanGroups(map[int]bool{pgid: true}, make([]byte, 4096))
	if err != nil {
		return Sched{}, err
	}
	members := groups[pgid]
	if len(members) == 0 {
		return Sched{}, fmt.Errorf("process group %d has no process", pgid)
	}
	var total Sched
	for _, m := range members {
		b, err := readProcFile(procPath(m.pid, "schedstat"), buf)
		if err != nil {
			if isGone(err) {
				continue // exited between the scan and now: its time is in its parent's cutime once reaped
			}
			return Sched{}, err
		}
		buf = b
		f := bytes.Fields(b)
		if len(f) < 2 {
			return Sched{}, fmt.Errorf("process %d: schedstat %q has fewer than two fields", m.pid, b)
		}
		var ns [2]int64
		for i := range ns {
			if ns[i], err = strconv.ParseInt(string(f[i]), 10, 64); err != nil {
				return Sched{}, fmt.Errorf("process %d: schedstat %q: %w", m.pid, f[i], err)
			}
		}
		total.CPU += time.Duration(ns[0]) + ticksToDuration(m.childTicks)
		total.RunDelay += time.Duration(ns[1])
	}
	return total, nil
}
