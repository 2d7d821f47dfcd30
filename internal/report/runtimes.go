package report

import (
	"fmt"
	"io"
	"strings"

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
	const row = "  %-13s %7s %6s %6s %5s %6s %6s %8s %6s %6s  %s\n"
	fmt.Fprintln(w, strings.TrimRight(fmt.Sprintf(row, "", "", "MiB a", "MiB", "MiB", "MiB", "", "", "", "", ""), " \n"))
	fmt.Fprintf(w, row, "runtime", "workers", "worker", "shared", "front", "total", "req/s", "req/CPU-s", "p50 ms", "p99 ms",
		"req/s against the incumbent")
	for _, rt := range r.List {
		verdict := rt.Status
		if c := rt.Vs; c != nil {
			verdict = fmt.Sprintf("%+.1f%% [%+.1f, %+.1f] %s", 100*c.Estimate, 100*c.Lo, 100*c.Hi, verdictWord(c.Verdict))
		}
		workers := fmt.Sprint(rt.Size)
		if rt.MemoryLimit > 0 && rt.MemoryLimit < r.Target {
			workers += "*" // memory held fewer than the target
		}
		m := func(b int64) string { return fmt.Sprintf("%.1f", float64(b)/(1<<20)) }
		ms := func(us float64) string { return fmt.Sprintf("%.1f", us/1000) }
		fmt.Fprintf(w, row, rt.Server, workers, m(rt.PerWorkerBytes), m(rt.SharedBytes), m(rt.FrontBytes), m(rt.TotalBytes),
			rate(rt.RPS), rate(rt.ReqPerCPUS), ms(rt.P50Us), ms(rt.P99Us), verdict)
		if rt.Note != "" {
			fmt.Fprintf(w, "  %-13s %s\n", "", rt.Note)
		}
	}
	fmt.Fprintf(w, "  %-13s memory and latency from the race's trials (latency: every request of them); * memory-bound\n", "")
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
