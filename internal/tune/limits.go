package tune

// Memory limits during the run. The pool is sized within Options.Memory (a cgroup's limit, or the host's); the
// run's own stacks must stay within it too, or the kernel's OOM killer measures in their place: tune in a v1
// memory cgroup of 600 MiB on a page that holds 40 MB once drew 332 kills during its sweep on a static pool of
// 32, read 5.3 req/s at one connection and said nothing.

// sweepShared is the shared memory assumed for the sweep's pool before any is measured: opcache's segment as
// an app fills it, and the binary's text.
const sweepShared = 64 << 20

// workerBase is a worker's private memory besides PHP's own peak for a request: the interpreter's state, the
// stack, libc's arenas.
const workerBase = 16 << 20

// sweepPool is the static pool of the sweep: large, unless memory says otherwise. peak is the largest of PHP's
// peak memory for one request of any URL, as the first stack's check saw it (0: not known, then 64 MiB a
// worker is assumed).
func sweepPool(memory, peak int64) int {
	n := 128
	if memory > 0 {
		per := max(peak+workerBase, 32<<20)
		if peak == 0 {
			per = 64 << 20
		}
		n = min(n, max(1, int((memory-sweepShared)/per)))
	}
	return n
}

// urlPeak is the largest peak memory of a request among the URLs as checked.
func urlPeak(urls []URL) int64 {
	var m int64
	for _, u := range urls {
		m = max(m, u.PeakMemory)
	}
	return m
}
