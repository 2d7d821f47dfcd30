package phpbuild

import (
	"slices"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/exitcode"
)

// TestCheckAsked: the baseline is added when the variants are verified against it, not otherwise; an unknown
// variant, training mode or too few rounds to verify is a usage error naming its flag.
func TestCheckAsked(t *testing.T) {
	o := Options{Variants: []string{"pgo"}, TrainMode: "cgi", Rounds: 6, Verify: true}
	if err := o.CheckAsked(); err != nil || !slices.Equal(o.Variants, []string{Baseline, "pgo"}) {
		t.Errorf("pgo, verified: %v, variants %q; want the baseline first", err, o.Variants)
	}
	o = Options{Variants: []string{"pgo+lto"}, TrainMode: "live", Rounds: 1}
	if err := o.CheckAsked(); err != nil || !slices.Equal(o.Variants, []string{"pgo+lto"}) {
		t.Errorf("pgo+lto, not verified: %v, variants %q; want it alone, any rounds", err, o.Variants)
	}
	for want, o := range map[string]Options{
		"--variants pgo+o3":      {Variants: []string{"pgo+o3"}, TrainMode: "cgi", Rounds: 6},
		"--train-mode fast":      {Variants: []string{"pgo"}, TrainMode: "fast", Rounds: 6},
		"--rounds 5: at least 6": {Variants: []string{"pgo"}, TrainMode: "cgi", Rounds: 5, Verify: true},
	} {
		if err := o.CheckAsked(); exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want a usage error saying so", want, err)
		}
	}
}
