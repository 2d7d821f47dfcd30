//go:build realbuild

package phpbuild

// The real build: `make test-build` (not part of `make test`: 10 to 30 minutes on 2 cores). It builds Debian's
// php8.2 source lean, baseline and PGO trained on the demo app, checks that each php-fpm serves the demo app,
// verifies briefly, and checks that a second request is answered from the cache.

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/workloads"
)

func TestRealBuild(t *testing.T) {
	cache := os.Getenv("PHPTUNE_BUILD_CACHE")
	if cache == "" {
		var err error
		if cache, err = DefaultCacheDir(); err != nil {
			t.Fatal(err)
		}
	}
	var log strings.Builder
	o := Options{
		CacheDir: cache, Debian: "php8.2", App: workloads.Demo(), AppName: "demo", SmokeApp: workloads.Demo(),
		Train: DemoTrain, Holdout: DemoHoldout, TrainN: 50, Verify: true, Rounds: 6, Repeats: 10, Callgrind: false,
		Log:    &log,
		OnStep: func(v, s string) { t.Logf("%s %s: %s", time.Now().Format(time.TimeOnly), v, s) },
	}
	start := time.Now()
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatalf("%v\n%s", err, tailString(log.String(), 40))
	}
	t.Logf("first run: %v", time.Since(start).Round(time.Second))
	for _, name := range []string{Baseline, PGO} {
		v := res.Variant(name)
		if v == nil || !v.Available {
			t.Fatalf("%s unavailable: %+v", name, v)
		}
		for _, s := range v.Steps {
			t.Logf("%s %-16s %6.0fs", name, s.Name, s.Seconds)
		}
		t.Logf("%s: %s, cached %v, build %.0fs, warnings %d", name, v.Prefix, v.Cached, v.BuildSeconds, len(v.Warnings))
		bins, err := PrefixBinaries(v.Prefix)
		if err != nil {
			t.Fatal(err)
		}
		// The smoke test already ran inside Run; run it again here so the test itself asserts it.
		if err := Smoke(context.Background(), bins, workloads.Demo(), DemoChecks, &log); err != nil {
			t.Errorf("%s php-fpm does not serve the demo app: %v", name, err)
		}
	}
	pgo := res.Variant(PGO)
	var steps []string
	for _, s := range pgo.Steps {
		steps = append(steps, s.Name)
	}
	if !pgo.Cached && !strings.Contains(strings.Join(steps, ","), "check profiles") {
		t.Errorf("pgo steps %v: no profile check", steps)
	}
	for _, set := range SetNames {
		t.Logf("pgo %s: gain %.1f%% %v %s (baseline %.0fus, pgo %.0fus)", set, pgo.GainPct[set], pgo.GainCIPct[set],
			pgo.Verdict[set], res.Variant(Baseline).TimePerReqUS[set], pgo.TimePerReqUS[set])
		if pgo.Verdict[set] == "" {
			t.Errorf("no verdict for %s", set)
		}
	}
	// Unchanged request: both variants come from the cache.
	o.Verify = false
	start = time.Now()
	res2, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{Baseline, PGO} {
		if v := res2.Variant(name); !v.Cached || v.Prefix != res.Variant(name).Prefix {
			t.Errorf("second run: %s not from the cache: %+v", name, v)
		}
	}
	t.Logf("second run (cached, smoke tests only): %v", time.Since(start).Round(time.Second))
}

func tailString(s string, n int) string {
	l := strings.Split(s, "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n")
}
