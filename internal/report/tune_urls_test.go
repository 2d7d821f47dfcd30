package report

import (
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/tune"
)

// A page that needs several times the memory of the others is singled out, with two URLs as with many.
func TestURLListSinglesOutMemory(t *testing.T) {
	two := urlList([]tune.URL{{Path: "/big", Weight: 1, PeakMemory: 50 << 20}, {Path: "/small", Weight: 3, PeakMemory: 2 << 20}})
	if !strings.Contains(two[0], "25x the other URLs'") || strings.Contains(two[1], "x the other") {
		t.Errorf("%q", two)
	}
	same := urlList([]tune.URL{{Path: "/a", Weight: 1, PeakMemory: 2 << 20}, {Path: "/b", Method: "POST", Weight: 1}})
	if same[0] != "/a (weight 1, 2.0 MiB peak)" || same[1] != "POST /b (weight 1)" {
		t.Errorf("%q", same)
	}
}
