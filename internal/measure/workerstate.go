package measure

// What /proc tells of a php-fpm worker without asking the pool: whether it waits in accept() for a connection
// (idle) or is held by one, and where it is held. A worker held by a kept connection between two requests and
// one reading a request's body both wait in read(): /proc cannot tell them apart, nor which script runs.

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// WorkerState is one worker at one moment.
type WorkerState struct {
	PID   int    `json:"pid"`
	State string `json:"state"` // /proc/PID/stat's: R running, S sleeping, D uninterruptible
	// Syscall is the system call it is blocked in ("accept", "nanosleep", "read"...; "syscall N" when not named
	// here), "" when it runs or /proc/PID/syscall is unreadable (another user's process, when not root).
	Syscall string `json:"syscall,omitempty"`
	Wchan   string `json:"wchan,omitempty"` // the kernel function it waits in
}

// Idle says the worker waits for a connection: php-fpm's workers block in accept() on the pool's socket.
func (w WorkerState) Idle() bool { return w.Syscall == "accept" || w.Syscall == "accept4" }

// Doing says in a few words what the worker does, as far as /proc tells.
func (w WorkerState) Doing() string {
	switch {
	case w.Idle():
		return "idle (in accept)"
	case w.Syscall != "": // read after the state: where it was blocked last
		return "in " + w.Syscall
	case w.State == "R":
		return "running"
	}
	return "state " + w.State
}

// ReadWorkerState reads a process's state, system call and wait channel.
func ReadWorkerState(pid int) (WorkerState, error) {
	st, _, err := readStat(pid, make([]byte, 4096))
	if err != nil {
		return WorkerState{}, err
	}
	w := WorkerState{PID: pid, State: string(rune(st.state))}
	if b, err := os.ReadFile(procPath(pid, "wchan")); err == nil && string(b) != "0" {
		w.Wchan = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile(procPath(pid, "syscall")); err == nil {
		w.Syscall = syscallName(string(b))
	}
	return w, nil
}

// syscallName names the call in /proc/PID/syscall ("43 0xc ..."; "running"; "-1 ..." when blocked outside one).
func syscallName(line string) string {
	f := strings.Fields(line)
	if len(f) == 0 {
		return ""
	}
	n, err := strconv.Atoi(f[0])
	if err != nil || n < 0 {
		return ""
	}
	if name := syscallOf(n); name != "" {
		return name
	}
	return fmt.Sprintf("syscall %d", n)
}

// syscallOf names the calls a php-fpm worker is found blocked in, by this architecture's numbers.
func syscallOf(n int) string {
	switch n {
	case syscall.SYS_ACCEPT:
		return "accept"
	case syscall.SYS_ACCEPT4:
		return "accept4"
	case syscall.SYS_READ:
		return "read"
	case syscall.SYS_WRITE:
		return "write"
	case syscall.SYS_RECVFROM:
		return "recvfrom"
	case syscall.SYS_SENDTO:
		return "sendto"
	case syscall.SYS_CONNECT:
		return "connect"
	case syscall.SYS_NANOSLEEP:
		return "nanosleep"
	case syscall.SYS_CLOCK_NANOSLEEP:
		return "clock_nanosleep"
	case syscall.SYS_PPOLL:
		return "ppoll"
	case syscall.SYS_PSELECT6:
		return "pselect6"
	case syscall.SYS_EPOLL_PWAIT:
		return "epoll_pwait"
	case syscall.SYS_FUTEX:
		return "futex"
	case syscall.SYS_FLOCK:
		return "flock"
	case syscall.SYS_WAIT4:
		return "wait4"
	}
	return archSyscallOf(n)
}

// PoolWorkers are the pids of a master's workers of pool name (its children titled "php-fpm: pool NAME").
func PoolWorkers(master int, name string) ([]int, error) {
	procs, err := fpmProcs()
	if err != nil {
		return nil, err
	}
	var out []int
	for _, p := range procs {
		if p.ppid == master && strings.TrimSpace(strings.TrimPrefix(p.title, poolTitle)) == name && strings.HasPrefix(p.title, poolTitle) {
			out = append(out, p.pid)
		}
	}
	return out, nil
}
