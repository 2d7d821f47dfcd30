package load

import (
	"slices"
	"testing"
)

// TestURLWeights: --url PATH[=WEIGHT], where a query string's own '=' belongs to the path.
func TestURLWeights(t *testing.T) {
	cases := []struct {
		in, path string
		weight   int
	}{
		{"/", "/", 1},
		{"/blog/=3", "/blog/", 3},
		{"/articles?page=2", "/articles?page=2", 1},
		{"/articles?page=2&sort=title", "/articles?page=2&sort=title", 1},
		{"/articles?page=2&sort=title=4", "/articles?page=2&sort=title", 4},
		{"/articles?page=2=2", "/articles?page=2", 2},
	}
	for _, c := range cases {
		mix, err := ParseURLs([]string{c.in}, nil)
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if mix[0].URI != c.path || mix[0].Weight != c.weight {
			t.Errorf("%s: path %q weight %d, want %q and %d", c.in, mix[0].URI, mix[0].Weight, c.path, c.weight)
		}
	}
	for _, bad := range []string{"/a=0", "/a=x", "/a?b=1=-2", "blog=2"} {
		if _, err := ParseURLs([]string{bad}, nil); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}

// TestURIs: the mix's URIs to train on, each once.
func TestURIs(t *testing.T) {
	if got := URIs([]MixItem{{URI: "/a"}, {URI: "/b"}, {URI: "/a"}}); !slices.Equal(got, []string{"/a", "/b"}) {
		t.Errorf("URIs %v", got)
	}
}
