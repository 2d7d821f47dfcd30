package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/measure"
	"github.com/phptune/phptune/internal/profile"
)

func TestProfileSummary(t *testing.T) {
	r := &profile.Result{App: "demo app", URLs: []profile.URL{{URI: "/", Weight: 1}}, Partial: true, Variants: []profile.VariantResult{
		{Name: "baseline", Config: "pm=dynamic", TracedRequests: 100, SyscallsPerReq: 30, Syscalls: map[string]float64{"read": 10, "openat": 0.5},
			InstructionsPerReq: 2e6, Instructions: []profile.URLInstr{{URI: "/", InstrResult: &measure.InstrResult{PerRequest: 2e6, Warmup: 2, N: 3}}},
			Opcache: &measure.Opcache{Enabled: true, Hits: 99, Misses: 1, HitRate: 99}, Warnings: []string{"opcache hit rate low"}},
		{Name: "opcache=off", Config: "pm=dynamic opcache.enable=0", TracedRequests: 100, SyscallsPerReq: 150,
			Syscalls: map[string]float64{"read": 50, "openat": 45.5}, InstructionsPerReq: 5e6,
			Instructions: []profile.URLInstr{{URI: "/", InstrResult: &measure.InstrResult{PerRequest: 5e6, Warmup: 2, N: 3}}},
			Opcache:      &measure.Opcache{}},
		{Name: "pm=bogus", Error: "start php-fpm: pm bogus"},
		{Name: "jit=tracing", Error: "instructions of /: php-cgi /tmp/phptune-111963450/app/index.php: PHP Fatal error:  " +
			"Maximum execution time of 30 seconds exceeded in /tmp/phptune-111963450/app/wp-includes/l10n.php on line 298"},
	}}
	r.Variants[0].Warnings = append(r.Variants[0].Warnings, "PHP's text is on 4 KiB pages: opcache.huge_code_pages=1 "+
		"(for the master: php.ini or php-fpm -d) copies it to huge pages at start-up")
	var b bytes.Buffer
	Profile(&b, r)
	out := b.String()
	for _, want := range []string{
		"PARTIAL", "pm=bogus FAILED: start php-fpm: pm bogus",
		"all                                  30.0            150.0   +120.0 (+400%)",
		"openat                                0.5             45.5   +45.0 (+9000%)",
		"php-cgi -T 5: median of the last 3", "2.000 M          5.000 M +3.000 M (+150%)",
		"hit rate                           99.00%                -", "opcache hit rate low",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	for _, l := range strings.Split(out, "\n") {
		if len(l) > lineWidth {
			t.Errorf("a line of %d columns, want at most %d: %q", len(l), lineWidth, l)
		}
	}
	// openat moved most, so it comes before read.
	if strings.Index(out, "openat") > strings.Index(out, "  read") {
		t.Errorf("rows not sorted by difference:\n%s", out)
	}
}
