package phpbuild

import (
	"context"
	"io"
	"math"
	"math/rand"
	"testing"

	"github.com/phptune/phptune/internal/stats"
)

// plantedTimer is a fake php-cgi: each arm's time per request on each set is the baseline's (1000 us) times
// its planted factor, with a drift the whole round shares (the machine gets busier and quieter) and noise of
// its own in each run, as pinned php-cgi runs vary on a shared machine.
func plantedTimer(rng *rand.Rand, arms int, factor map[string]map[string]float64, sd float64) func(context.Context, Arm, string) (float64, error) {
	drift, calls := 1.0, 0
	return func(_ context.Context, a Arm, set string) (float64, error) {
		if calls%(arms*len(SetNames)) == 0 { // a round's first run
			drift = math.Exp(rng.NormFloat64() * 0.05)
		}
		calls++
		f := 1.0
		if m := factor[a.Name]; m != nil && m[set] > 0 {
			f = m[set]
		}
		return 1000 * f * drift * math.Exp(rng.NormFloat64()*sd), nil
	}
}

func verifyFake(t *testing.T, seed int64, factor map[string]map[string]float64) ([]*ArmResult, int) {
	t.Helper()
	cfg := VerifyConfig{Rounds: 10, timer: plantedTimer(rand.New(rand.NewSource(seed)), 2, factor, 0.01)}
	res, done, err := Verify(context.Background(), []Arm{{Name: Baseline}, {Name: PGO}}, cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	return res, done
}

// A planted gain (pgo 5% faster on the trained and held-out sets, the same on the guard) comes out better, with
// the gain's sign, on the sets that have it; the guard is not better or worse.
func TestVerifyFindsAPlantedGain(t *testing.T) {
	res, done := verifyFake(t, 1, map[string]map[string]float64{PGO: {SetTrain: 0.95, SetHoldout: 0.95}})
	r := &Result{Variants: []*VariantResult{{Name: Baseline}, {Name: PGO}}}
	fill(r, res)
	pgo := r.Variants[1]
	for _, set := range []string{SetTrain, SetHoldout} {
		g := pgo.GainPct[set]
		if pgo.Verdict[set] != string(stats.Better) || g < 3 || g > 7 || pgo.GainCIPct[set][0] > g || g > pgo.GainCIPct[set][1] {
			t.Errorf("%s: %s, gain %.1f%% %v: want better, about +5%% inside its interval", set, pgo.Verdict[set], g, pgo.GainCIPct[set])
		}
	}
	if v := pgo.Verdict[SetGuard]; v == string(stats.Better) || v == string(stats.Worse) {
		t.Errorf("guard: %s with no effect planted", v)
	}
	t.Logf("decided in %d rounds: %v", done, pgo.Verdict)
}

// A slower variant is worse, not better: the sign is the gain's.
func TestVerifyFindsAPlantedLoss(t *testing.T) {
	res, _ := verifyFake(t, 2, map[string]map[string]float64{PGO: {SetTrain: 1.08, SetHoldout: 1.08, SetGuard: 1.08}})
	for _, set := range SetNames {
		if c := res[1].Cmp[set]; c == nil || c.Verdict != stats.Worse || c.Estimate < 0.05 {
			t.Errorf("%s: %+v: want worse, time about +8%%", set, c)
		}
	}
}

// With no effect planted, no set comes out better or worse: in 1000 simulated verifications (each 3 comparisons
// within an error budget of 0.05), the share with any such verdict stays within the budget.
func TestVerifyNullErrorRate(t *testing.T) {
	wrong := 0
	const runs = 1000
	for seed := int64(0); seed < runs; seed++ {
		res, _ := verifyFake(t, 100+seed, nil)
		for _, c := range res[1].Cmp {
			if c.Verdict == stats.Better || c.Verdict == stats.Worse {
				wrong++
				break
			}
		}
	}
	if wrong > runs*5/100 {
		t.Errorf("%d of %d null verifications had a better or worse verdict: want at most 5%%", wrong, runs)
	}
	t.Logf("%d of %d null verifications had a wrong verdict", wrong, runs)
}
