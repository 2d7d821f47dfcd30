package accesslog

import (
	"fmt"
	"strings"
	"testing"
)

// combined is an nginx combined line for a request.
func combined(method, uri string, status int) string {
	return fmt.Sprintf(`203.0.113.7 - - [10/Oct/2024:13:55:36 +0000] "%s %s HTTP/1.1" %d 5123 "https://example.com/" "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36"`,
		method, uri, status)
}

// logOf is a combined log of GETs answered 200, one line per URI.
func logOf(uris ...string) string {
	var b strings.Builder
	for _, u := range uris {
		b.WriteString(combined("GET", u, 200))
		b.WriteByte('\n')
	}
	return b.String()
}

// times repeats uri n times.
func times(n int, uri string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = uri
	}
	return out
}

func readString(t *testing.T, log string, o Options) *Mix {
	t.Helper()
	m, err := ReadFrom(strings.NewReader(log), "access.log", o)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// routeMap keys the chosen routes by method and pattern.
func routeMap(m *Mix) map[string]Route {
	out := map[string]Route{}
	for _, r := range m.Routes {
		out[r.Method+" "+r.Pattern] = r
	}
	return out
}

func exampleURIs(r Route) []string {
	var out []string
	for _, e := range r.Examples {
		out = append(out, e.URI)
	}
	return out
}

// all keeps every route so collapsing can be checked on its own.
var all = Options{Top: 1000, Coverage: 1, Examples: 100}
