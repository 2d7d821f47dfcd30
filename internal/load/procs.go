package load

import (
	"runtime"

	"github.com/phptune/phptune/internal/measure"
)

// SetProcs sets the Go processors the generator runs on, --gomaxprocs (0: defaultProcs of the CPUs this process
// may use, a cgroup's CPU quota counted), and returns the undo.
func SetProcs(procs int) (undo func()) {
	if procs == 0 {
		lim, _ := measure.ReadPlace("")
		procs = defaultProcs(lim.WholeCPUs(), runtime.NumCPU())
	}
	if procs <= 0 {
		return func() {}
	}
	old := runtime.GOMAXPROCS(procs)
	return func() { runtime.GOMAXPROCS(old) }
}

// defaultProcs is the generator's Go processors where cpus may be used of host's: one with 2 or fewer, so the
// server keeps a core; the quota's CPUs under a CPU quota (Go's runtime counts the host's for a module of go
// 1.23, and a generator with more processors than its quota is throttled in bursts); else the runtime's own (0).
func defaultProcs(cpus, host int) int {
	switch {
	case cpus <= 2:
		return 1
	case cpus < host:
		return cpus
	}
	return 0
}
