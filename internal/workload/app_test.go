package workload

import (
	"regexp"
	"slices"
	"testing"

	"github.com/phptune/phptune/internal/load"
)

// TestPaths: a preset's URLs and weights without their markers, in order; a plain docroot's, / alone.
func TestPaths(t *testing.T) {
	a := &App{URLs: []load.MixItem{
		{URI: "/", Weight: 3, ExpectBody: regexp.MustCompile("Welcome")},
		{URI: "/doku.php?id=wiki:syntax", Weight: 1, ExpectBody: regexp.MustCompile("Formatting")},
	}}
	want := []load.MixItem{{URI: "/", Weight: 3}, {URI: "/doku.php?id=wiki:syntax", Weight: 1}}
	if got := a.Paths(); !slices.EqualFunc(got, want, sameItem) {
		t.Errorf("preset: %+v, want %+v", got, want)
	}
	if a.URLs[0].ExpectBody == nil {
		t.Error("Paths changed the app's own URLs")
	}
	if got := (&App{}).Paths(); !slices.EqualFunc(got, []load.MixItem{{URI: "/", Weight: 1}}, sameItem) {
		t.Errorf("plain docroot: %+v, want / alone", got)
	}
}

func sameItem(a, b load.MixItem) bool {
	return a.URI == b.URI && a.Weight == b.Weight && a.ExpectBody == nil && b.ExpectBody == nil
}
