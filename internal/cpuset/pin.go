package cpuset

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/phptune/phptune/internal/measure"
)

// PinGroup pins every thread of every process of process group pgid to s: its leader first, so that a worker it
// forks meanwhile (php-fpm respawning one) inherits s, then the members found after. A process that exits
// meanwhile is skipped.
func PinGroup(pgid int, s Set) error {
	m := s.mask()
	if err := pinProcess(pgid, &m); err != nil {
		return fmt.Errorf("pin process group %d to CPUs %s: %w", pgid, s, err)
	}
	pids, err := measure.ProcessGroup(pgid)
	if err != nil {
		return fmt.Errorf("pin process group %d: %w", pgid, err)
	}
	for _, pid := range pids {
		if err := pinProcess(pid, &m); err != nil {
			return fmt.Errorf("pin process %d of group %d to CPUs %s: %w", pid, pgid, s, err)
		}
	}
	return nil
}

// pinProcess sets the affinity of every thread of pid (sched_setaffinity is a thread's): nginx may run thread
// pools. A process or thread gone meanwhile is no error.
func pinProcess(pid int, m *unix.CPUSet) error {
	tids, err := threads(pid)
	if err != nil {
		return err
	}
	for _, tid := range tids {
		if err := unix.SchedSetaffinity(tid, m); err != nil && !errors.Is(err, unix.ESRCH) {
			return fmt.Errorf("thread %d: %w", tid, err)
		}
	}
	return nil
}

// threads lists pid's threads from /proc/PID/task; none when pid is gone.
func threads(pid int) ([]int, error) {
	es, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, unix.ESRCH) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list threads of %d: %w", pid, err)
	}
	tids := make([]int, 0, len(es))
	for _, e := range es {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			tids = append(tids, tid)
		}
	}
	return tids, nil
}

// Spread pins the members of process group pgid but its leader one to each CPU of all in turn, in the order of
// their pids: a pool's workers spread evenly over the CPUs, so that what slows one CPU slows an even share of
// every pool spread so. The leader (php-fpm's master, which serves no request) is left as it is.
func Spread(pgid int, all Set) error {
	if len(all) == 0 {
		return nil
	}
	pids, err := measure.ProcessGroup(pgid)
	if err != nil {
		return fmt.Errorf("spread process group %d: %w", pgid, err)
	}
	slices.Sort(pids)
	i := 0
	for _, pid := range pids {
		if pid == pgid {
			continue
		}
		m := Set{all[i%len(all)]}.mask()
		if err := pinProcess(pid, &m); err != nil {
			return fmt.Errorf("pin process %d of group %d to CPU %d: %w", pid, pgid, all[i%len(all)], err)
		}
		i++
	}
	return nil
}
