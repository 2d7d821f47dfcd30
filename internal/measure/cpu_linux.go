package measure

import (
	"syscall"
	"time"
)

// SelfCPU is the CPU time (user + system, all threads) this process has used so far, from getrusage: take it
// before and after a trial for the load generator's own cost. Its resolution is far finer than /proc's 10 ms.
func SelfCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, err
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

// threadCPU is the CPU time of the calling OS thread (RUSAGE_THREAD); the caller locks its goroutine to it.
func threadCPU() time.Duration {
	const rusageThread = 1
	var ru syscall.Rusage
	if syscall.Getrusage(rusageThread, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
