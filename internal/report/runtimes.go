package report

import (
	"fmt"
	"io"

	"github.com/phptune/phptune/internal/stats"
	"github.com/phptune/phptune/internal/tune"
)

// runtimes prints the server race's runtimes side by side: each one's size by the shared rule, the memory it
// took at that size, what it served, and its verdict against the incumbent.
func runtimes(w io.Writer, r *tune.Runtimes) {
	if r == nil || len(r.List) == 0 {
		return
	}
	fmt.Fprintf(w, "\n  Runtimes      each sized by one rule: %d PHP workers, or fewer where %s holds fewer (a worker at its\n", r.Target, mib(r.Memory))
	fmt.Fprintf(w, "  %-13s peak private memory, shared memory and the HTTP server in front counted once)\n", "")
	fmt.Fprintf(w, "  %-14s %7s %10s %8s %7s %8s %7s %9s %8s %8s  %s\n", "runtime", "workers", "per worker", "shared", "front", "total",
		"req/s", "req/CPU-s", "p50", "p99", "req/s against the incumbent")
	for _, rt := range r.List {
		verdict := rt.Status
		if c := rt.Vs; c != nil {
			verdict = fmt.Sprintf("%+.1f%% [%+.1f%%, %+.1f%%] %s", 100*c.Estimate, 100*c.Lo, 100*c.Hi, verdictWord(c.Verdict))
		}
		workers := fmt.Sprint(rt.Size)
		if rt.MemoryLimit > 0 && rt.MemoryLimit < r.Target {
			workers += "*" // memory held fewer than the target
		}
		fmt.Fprintf(w, "  %-14s %7s %10s %8s %7s %8s %7s %9s %8s %8s  %s\n", rt.Server, workers, mibs(float64(rt.PerWorkerBytes)),
			mib(rt.SharedBytes), mib(rt.FrontBytes), mib(rt.TotalBytes), rate(rt.RPS), rate(rt.ReqPerCPUS), us(rt.P50Us), us(rt.P99Us), verdict)
		if rt.Note != "" {
			fmt.Fprintf(w, "  %-14s %s\n", "", rt.Note)
		}
	}
	fmt.Fprintf(w, "  %-14s memory and latency from the race's trials (latency: every request of them); * memory-bound\n", "")
}

// verdictWord is a verdict as the terminal's tables print it ("-": none).
func verdictWord(v stats.Verdict) string {
	switch v {
	case stats.NoDifference:
		return "~ no_difference"
	case stats.Inconclusive:
		return "? inconclusive"
	case "":
		return "-"
	}
	return string(v)
}
