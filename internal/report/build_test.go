package report

import (
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/phpbuild"
)

func TestBuildTable(t *testing.T) {
	r := &phpbuild.Result{
		Source:    phpbuild.Source{Version: "8.2.32", Origin: "debian php8.2=8.2.32-1~deb12u1"},
		Configure: []string{"--disable-all", "--enable-fpm"},
		Notes:     []string{"the source (PHP 8.2.32) is older than the installed PHP 8.2.36"},
		Rounds:    10, CPU: 1,
		Variants: []*phpbuild.VariantResult{
			{Name: "baseline", Available: true, Prefix: "/c/baseline-1", BuildSeconds: 600,
				TimePerReqUS: map[string]float64{"train": 2500, "holdout": 1800, "guard": 450000}},
			{Name: "pgo", Available: true, Prefix: "/c/pgo-2", Cached: true,
				TimePerReqUS: map[string]float64{"train": 2000, "holdout": 1750, "guard": 470000},
				GainPct:      map[string]float64{"train": 20, "holdout": 2.5, "guard": -4.4},
				GainCIPct:    map[string][2]float64{"train": {18, 22}, "holdout": {1, 4}, "guard": {-6, -3}},
				Verdict:      map[string]string{"train": "better", "holdout": "better", "guard": "worse"},
				IPR:          map[string]float64{"train": 4.1e6}, IPRChangePct: map[string]float64{"train": -3.6}},
			{Name: "pgo+lto", Reason: "not built: plain -flto fails\nmore"},
		},
	}
	var b strings.Builder
	Build(&b, r)
	out := b.String()
	for _, want := range []string{
		"PHP 8.2.32 (debian php8.2=8.2.32-1~deb12u1)",
		"note: the source (PHP 8.2.32) is older",
		"pgo+lto   unavailable: not built: plain -flto fails",
		"+20.0% [+18.0, +22.0]",
		"-4.4% [-6.0, -3.0]",
		"worse",
		"4.1M (-3.6%)",
		"(reference)",
		"(cached)",
		"gain [interval]",
		"All verdicts of the build hold together at 95% confidence",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "% CI") {
		t.Errorf("a level said beside the figures, where a sentence says it once:\n%s", out)
	}
	for _, l := range strings.Split(out, "\n") {
		if len([]rune(l)) > 120 {
			t.Errorf("%d columns: %s", len([]rune(l)), l)
		}
	}
	if strings.Contains(out, "more") {
		t.Errorf("a reason's later lines belong in the JSON, not the table:\n%s", out)
	}
}
