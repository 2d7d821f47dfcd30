package phpbuild

import (
	"context"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/stack"
	"github.com/phptune/phptune/workloads"
)

// Two arms of the same installed php-fpm: the pipeline's wiring (stacks, interleaved trials, pairing, decision)
// is under test, not a gain.
func TestThroughputThroughFPM(t *testing.T) {
	arms := []FPMArm{{Name: Baseline}, {Name: PGO}}
	res, err := Throughput(context.Background(), arms, stack.Config{AppFS: workloads.Demo()}, []string{"/", "/articles/7"}, 6, 600*time.Millisecond, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	r, ok := res[PGO]
	if !ok || r.Trials < 2 || r.Trials > 6 || r.RPS <= 0 || r.BaselineRPS <= 0 || r.Verdict == "" {
		t.Fatalf("throughput %+v", res)
	}
	if !(r.GainCIPct[0] <= r.GainPct && r.GainPct <= r.GainCIPct[1]) {
		t.Errorf("gain %.2f outside its CI %v", r.GainPct, r.GainCIPct)
	}
}
