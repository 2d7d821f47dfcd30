package phpbuild

import (
	"testing"

	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/tune"
)

// TestTuneBuilds: the variants built become tune's builds in the order asked; one not built fails the run
// with its reason's first line and the log.
func TestTuneBuilds(t *testing.T) {
	r := &Result{Variants: []*VariantResult{
		{Name: "pgo", Available: true, PHPFPM: "/cache/pgo/sbin/php-fpm", Cached: true},
		{Name: "pgo+lto", Available: true, PHPFPM: "/cache/lto/sbin/php-fpm"},
		{Name: "bolt", Reason: "llvm-bolt not found\nsee the log"},
		{Name: "smoke", Available: true}, // no php-fpm: not built
	}}
	got, err := r.TuneBuilds([]string{"pgo+lto", "pgo"}, 42, "/run/build.log")
	if err != nil {
		t.Fatal(err)
	}
	want := []tune.Build{
		{Variant: "pgo+lto", PHPFPM: "/cache/lto/sbin/php-fpm", Seconds: 42},
		{Variant: "pgo", PHPFPM: "/cache/pgo/sbin/php-fpm", Cached: true, Seconds: 42},
	}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("builds %+v, want %+v", got, want)
	}
	for name, msg := range map[string]string{
		"bolt":    "tune --build bolt: llvm-bolt not found (log /run/build.log)",
		"smoke":   "tune --build smoke: not built (log /run/build.log)",
		"missing": "tune --build missing: not built (log /run/build.log)",
	} {
		_, err := r.TuneBuilds([]string{"pgo", name}, 1, "/run/build.log")
		if err == nil || err.Error() != msg || exitcode.Of(err) != exitcode.Failed {
			t.Errorf("%s: %v, want %q with exit code %d", name, err, msg, exitcode.Failed)
		}
	}
}
