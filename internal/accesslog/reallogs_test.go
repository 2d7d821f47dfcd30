package accesslog

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// Lines every real log has: a connection closed before its request ("-" 408), Apache's internal
// OPTIONS *, a TLS handshake on the plain port. They are no requests, not unparseable lines (which
// would make a right format look wrong).
func TestLinesWithoutARequestAreDropped(t *testing.T) {
	log := logOf("/a", "/a") +
		`203.0.113.7 - - [10/Oct/2024:13:55:36 +0000] "-" 408 0 "-" "-"` + "\n" +
		`::1 - - [10/Oct/2024:13:55:36 +0000] "OPTIONS * HTTP/1.0" 200 126 "-" "Apache (internal dummy connection)"` + "\n" +
		`203.0.113.9 - - [10/Oct/2024:13:55:36 +0000] "\x16\x03\x01\x02\x00\x01" 400 157 "-" "-"` + "\n"
	m := readString(t, log, Options{})
	if m.Unparsed != 0 || m.Dropped["no_request"] != 3 || m.Kept != 2 {
		t.Errorf("unparsed %d, dropped %v, kept %d: want 0, 3 without a request, 2", m.Unparsed, m.Dropped, m.Kept)
	}
}

// An appended $msec (seconds since 1970, with a dot) is no request time.
func TestImplausibleTimesAreNotTimes(t *testing.T) {
	log := combined("GET", "/a", 200) + " 1728568536.123\n"
	if m := readString(t, log, Options{}); m.HasTime {
		t.Errorf("an epoch time was read as the request time: %+v", m.Routes)
	}
	log = combined("GET", "/a", 200) + " 0.250\n"
	if m := readString(t, log, Options{}); !m.HasTime || m.Routes[0].MeanTime != 0.25 {
		t.Errorf("request time not read: %+v", m.Routes)
	}
}

// Many rare slugs under /shop collapse; /shop/cart, with a third of its requests, is a page of its own.
func TestPopularPagesDoNotCollapseWithSlugs(t *testing.T) {
	var uris []string
	for i := range 30 {
		uris = append(uris, fmt.Sprintf("/shop/product-%c%c", 'a'+i%26, 'a'+i/26))
	}
	uris = append(uris, times(20, "/shop/cart")...)
	m := readString(t, logOf(uris...), Options{Top: 10})
	routes := routeMap(m)
	if _, ok := routes["GET /shop/cart"]; !ok {
		t.Errorf("/shop/cart was collapsed: %v", m.Routes)
	}
	if r, ok := routes["GET /shop/{*}"]; !ok || r.Count != 30 {
		t.Errorf("the slugs were not collapsed: %v", m.Routes)
	}
}

// A format pasted from a config file as it stands there.
func TestFormatsPastedFromConfigs(t *testing.T) {
	line := `203.0.113.7 [10/Oct/2024:13:55:36 +0000] "GET /a?x=1 HTTP/1.1" 200 0.042` + "\n"
	for _, f := range []string{
		`log_format timed '$remote_addr [$time_local] '` + "\n" + `   '"$request" $status $request_time';`,
		`log_format timed escape=json '$remote_addr [$time_local] "$request" $status $request_time';`,
	} {
		m, err := ReadFrom(strings.NewReader(line), "access.log", Options{Format: f})
		if err != nil || m.Kept != 1 || !m.HasTime {
			t.Errorf("%s: %v %+v", f, err, m)
		}
	}
	apache := `203.0.113.7 - - [10/Oct/2024:13:55:36 +0000] "GET /a HTTP/1.1" 200 5 42000` + "\n"
	m, err := ReadFrom(strings.NewReader(apache), "access.log", Options{Format: `LogFormat "%h %l %u %t \"%r\" %>s %b %D" timed`})
	if err != nil || m.Kept != 1 || m.Routes[0].MeanTime != 0.042 {
		t.Errorf("Apache LogFormat line: %v %+v", err, m)
	}
}

// --log-exclude leaves matching requests out, counted apart.
func TestExclude(t *testing.T) {
	m := readString(t, logOf("/a", "/admin/x", "/admin/y", "/b?token=1"), Options{Exclude: regexp.MustCompile(`^/admin/|token=`)})
	if m.Kept != 1 || m.Dropped["excluded"] != 3 {
		t.Errorf("kept %d, dropped %v", m.Kept, m.Dropped)
	}
}
