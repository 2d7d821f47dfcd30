package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/phptune/phptune/internal/tune"
)

// runtimes prints the server race's runtimes side by side: each one's size by the shared rule, the memory it
// took at that size, what it served, and its change against the incumbent with its interval and verdict.
func runtimes(w io.Writer, r *tune.Runtimes) {
	if r == nil || len(r.List) == 0 {
		return
	}
	say := func(first, rest, text string) { writeWrapped(w, first, rest, text, termWidth) }
	fmt.Fprintln(w)
	say("  ", "    ", fmt.Sprintf("Runtimes, each sized by one rule: %d PHP workers, or fewer where %s holds fewer (* memory-bound):", r.Target, mib(r.Memory)))
	runtimesTable(r).write(w, 2, termWidth)
	var parts []string
	for _, rt := range r.List {
		parts = append(parts, fmt.Sprintf("%s %.1f and %.1f", rt.Server, float64(rt.SharedBytes)/(1<<20), float64(rt.FrontBytes)/(1<<20)))
	}
	say("  ", "  ", "MiB total: a worker at its peak private memory times the workers, the shared memory and the HTTP server "+
		"in front once (MiB shared and in front: "+strings.Join(parts, "; ")+"); from the race's trials, as is latency (every "+
		"request of them); req/CPU-s counts every server of a runtime.")
}

// runtimesTable is the runtimes' table: one row a runtime, its memory in MiB, its figures and its verdict.
func runtimesTable(r *tune.Runtimes) textTable {
	t := textTable{Head: []string{"runtime", "workers", "MiB/worker", "MiB total", "req/s", "req/CPU-s", "p50 ms",
		"p99 ms", "against the incumbent", "verdict"},
		Right: []bool{false, true, true, true, true, true, true, true, false, false}}
	m := func(b int64) string { return fmt.Sprintf("%.1f", float64(b)/(1<<20)) }
	ms := func(us float64) string { return fmt.Sprintf("%.1f", us/1000) }
	for _, rt := range r.List {
		workers := fmt.Sprint(rt.Size)
		if rt.MemoryLimit > 0 && rt.MemoryLimit < r.Target {
			workers += "*"
		}
		against, verdict := "", rt.Status
		if c := rt.Vs; c != nil {
			against = fmt.Sprintf("%s [%+.1f, %+.1f]", pctText(100*c.Estimate), 100*c.Lo, 100*c.Hi)
			verdict = termWord(verdictWord(c.Verdict))
		}
		row := textRow{Cells: []string{rt.Server, workers, m(rt.PerWorkerBytes), m(rt.TotalBytes), rate(rt.RPS), rate(rt.ReqPerCPUS),
			ms(rt.P50Us), ms(rt.P99Us), against, verdict}}
		if rt.Note != "" {
			row.Details = []string{rt.Note}
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}
