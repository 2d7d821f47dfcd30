package tune

import (
	"testing"

	"github.com/phptune/phptune/internal/exitcode"
)

// A latency goal not shown met is the run's error (exit 3), in the goal's own units; met, or none, is no error.
func TestP99CheckErr(t *testing.T) {
	var none *P99Check
	if err := none.Err(); err != nil {
		t.Errorf("no goal: %v", err)
	}
	if err := (&P99Check{Met: true, Verdict: "met"}).Err(); err != nil {
		t.Errorf("met: %v", err)
	}
	c := &P99Check{GoalUs: 50000, Rate: 120, P99Us: 61000, P99LoUs: 55000, P99HiUs: 70000, Verdict: "missed"}
	err := c.Err()
	want := "the p99 goal 50ms at 120 req/s was not shown to be met: p99 61.0 ms [55.0, 70.0] (missed)"
	if err == nil || err.Error() != want || exitcode.Of(err) != exitcode.Threshold {
		t.Errorf("missed: %v (exit %d), want %q (exit 3)", err, exitcode.Of(err), want)
	}
}
