package accesslog

import (
	"regexp"
	"slices"
	"testing"

	"github.com/phptune/phptune/internal/load"
)

// TestItems: a log's routes as the mix's URLs, each with its route's method, optional; and as URIs to train on,
// each repeated by its weight.
func TestItems(t *testing.T) {
	m := &Mix{Routes: []Route{
		{Method: "GET", Examples: []Example{{URI: "/a", Weight: 10}, {URI: "/a?p=2", Weight: 1}}},
		{Method: "POST", Examples: []Example{{URI: "/form", Weight: 5}}},
	}}
	check := regexp.MustCompile("ok")
	items := m.Items(load.Request{Method: "GET"}, check)
	if len(items) != 3 || items[0].Request != nil || items[2].Request == nil || items[2].Request.Method != "POST" ||
		!items[1].Optional || items[1].ExpectBody != check || items[2].Weight != 5 {
		t.Errorf("items: %+v", items)
	}
	want := slices.Concat(slices.Repeat([]string{"/a"}, 10), []string{"/a?p=2"}, slices.Repeat([]string{"/form"}, 5))
	if got := m.Training(); !slices.Equal(got, want) {
		t.Errorf("training URIs %q, want %q", got, want)
	}
}
