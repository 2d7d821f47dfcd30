//go:build realbuild

package main

// tune --build on a real build: `make test-build` (not part of `make test`: a PGO build takes 10 to 30 minutes
// on 2 cores, or seconds from the build cache).

import (
	"encoding/json"
	"testing"
)

// TestTuneBuildPGO: tune --build pgo on the demo app builds (or takes from the cache) a PGO PHP trained on the
// tuned mix, races it as the knob php against the installed php-fpm, and recommends it exactly when it is
// better.
func TestTuneBuildPGO(t *testing.T) {
	out := t.TempDir()
	// The demo's training pages, so that a cache filled by phptune build (or bench/pgo.sh) is reused.
	r := phptune(t, "tune", "--build", "pgo", "--url", "/", "--url", "/articles?page=2&sort=title", "--url", "/articles/7",
		"--url", "/articles?tag=php&sort=popular", "--only", "php", "--budget", "3m", "--out", out, "--json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var res struct {
		Builds []struct {
			Variant string `json:"variant"`
			PHPFPM  string `json:"php_fpm"`
		} `json:"builds"`
		Knobs []struct {
			Name, Value, Verdict, Compared string
			EffectPct                      float64 `json:"effect_pct"`
			CILowPct                       float64 `json:"ci_low_pct"`
			CIHighPct                      float64 `json:"ci_high_pct"`
			Rounds                         int
		} `json:"knobs"`
		Recommendation struct {
			PHPFPM string `json:"php_fpm"`
		} `json:"recommendation"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	if len(res.Builds) != 1 || res.Builds[0].Variant != "pgo" || res.Builds[0].PHPFPM == "" {
		t.Fatalf("builds %+v", res.Builds)
	}
	raced := false
	for _, k := range res.Knobs {
		if k.Name != "php" {
			continue
		}
		raced = k.Compared != "" && k.Verdict != ""
		t.Logf("php: %s, %s %+.1f%% [%+.1f, %+.1f] in %d rounds (%s)", k.Value, k.Verdict, k.EffectPct, k.CILowPct, k.CIHighPct,
			k.Rounds, k.Compared)
		if (k.Verdict == "better") != (res.Recommendation.PHPFPM == res.Builds[0].PHPFPM) {
			t.Errorf("verdict %s, recommended %q: the build is recommended exactly when it is better", k.Verdict, res.Recommendation.PHPFPM)
		}
	}
	if !raced {
		t.Errorf("the knob php was not raced: %+v", res.Knobs)
	}
}
