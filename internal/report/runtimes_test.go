package report

import (
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/stats"
	"github.com/phptune/phptune/internal/tune"
)

// TestRuntimesTable: the runtimes side by side, each line within 120 columns, a memory-bound size marked, every
// runtime's memory a worker, shared, in front and in all.
func TestRuntimesTable(t *testing.T) {
	rt := &tune.Runtimes{Target: 12, Memory: 400 << 20, List: []tune.Runtime{
		{Server: "nginx-fpm", Size: 11, MemoryLimit: 11, PerWorkerBytes: 32 << 20, SharedBytes: 28 << 20, FrontBytes: 8 << 20,
			TotalBytes: 388 << 20, RPS: 1234.5, ReqPerCPUS: 987.6, P50Us: 11300, P99Us: 245000, Status: "winner"},
		{Server: "apache-modphp", Size: 9, MemoryLimit: 9, PerWorkerBytes: 40 << 20, SharedBytes: 30 << 20, TotalBytes: 390 << 20,
			RPS: 1100, ReqPerCPUS: 900, P50Us: 12000, P99Us: 1250000, Status: "dropped",
			Vs: &stats.Comparison{Estimate: -0.123, Lo: -0.234, Hi: -0.045, Verdict: stats.Worse}},
		{Server: "apache-fpm", Size: 12, MemoryLimit: 40, Status: "open", Note: "not sized: start apache-fpm: apache2 exited",
			Vs: &stats.Comparison{Estimate: 0.012, Lo: -0.101, Hi: 0.115, Verdict: stats.Inconclusive}},
	}}
	var b strings.Builder
	runtimes(&b, rt)
	out := b.String()
	t.Logf("\n%s", out)
	for _, l := range strings.Split(out, "\n") {
		if len([]rune(l)) > 120 {
			t.Errorf("line of %d columns: %q", len([]rune(l)), l)
		}
	}
	for _, want := range []string{"11*", "9*", "-12.3% [-23.4, -4.5]", "worse", "? inconclusive", "40.0      390.0",
		"32.0      388.0", "nginx-fpm 28.0 and 8.0", "apache-modphp 30.0 and 0.0", "12 PHP workers", "not sized", "1250.0"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
}
