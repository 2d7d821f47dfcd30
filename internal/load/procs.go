package load

import "runtime"

// SetProcs sets the Go processors the generator runs on, --gomaxprocs (0: one on machines with 2 CPUs or fewer,
// so the server keeps a core), and returns the undo.
func SetProcs(procs int) (undo func()) {
	if procs == 0 && runtime.NumCPU() <= 2 {
		procs = 1
	}
	if procs <= 0 {
		return func() {}
	}
	old := runtime.GOMAXPROCS(procs)
	return func() { runtime.GOMAXPROCS(old) }
}
