package accesslog

import (
	"strings"
	"testing"
)

// fuzzFormats are the patterns every fuzzed line is parsed with, besides auto-detect.
var fuzzFormats = []string{
	`$remote_addr [$time_local] "$request" $status $request_time $upstream_response_time "$http_user_agent"`,
	`$remote_addr $request_method $uri$is_args$args $status`,
	`$remote_addr "$uri?$args" ${status}`,
	`%h %l %u %t \"%r\" %>s %b \"%{Referer}i\" \"%{User-Agent}i\" %D`,
	`%h %t %m %U%q %>s %{ms}T`,
	`$msec $time_iso8601 "$request" $status $upstream_response_time`,
	`%{%d/%b/%Y %T}t.%{msec_frac}t %{%z}t \"%r\" %>s %D`,
	`%{end:usec}t %{%a, %d %b %Y %H:%M:%S %Z}t \"%r\" %>s`,
}

func FuzzParseLine(f *testing.F) {
	for _, s := range []string{
		combined("GET", "/post/1?a=1&b", 200) + ` 0.123`,
		combined("GET", "/", 304) + ` rt=0.1 urt="0.1, -"`,
		`192.0.2.1 - - [10/Oct/2000:13:55:36 -0700] "GET /a?q=\"x\" HTTP/1.0" 200 2326 "-" "a \"b\\" c"`,
		`192.0.2.1 - - [10/Oct/2000:13:55:36 -0700] "-" 408 0 "-" "-"`,
		`127.0.0.1 - - [10/Oct/2000:13:55:36 -0700] "GET /x HTTP/1.0" 200 12 0.010`,
		`10.0.0.1 [10/Oct/2024:13:55:36 +0000] "GET /a HTTP/2.0" 200 0.5 0.300, 0.100 "ua"`,
		`1.2.3.4 [10/Oct/2000:13:55:36 -0700] GET /a?b=1 200 15`,
		`1.2.3.4 GET /x- 200`,
		`" [ "] "\" \\ [[ ]] = rt= urt="`,
		"\x00\xff\xfe [\x80] \"\xc3\x28 / HTTP/1.1\" 200",
		`1795616243.123 2026-11-25T14:17:23+00:00 "GET /a HTTP/1.1" 200 0.040`,
		`25/Nov/2026 14:17:23.042 +0000 "GET /a HTTP/1.1" 200 1500000`,
		`1795616243123456 Wed, 25 Nov 2026 14:17:23 GMT "GET /a HTTP/1.1" 200`,
		`9999999999999999999.9 0000-00-00T99:99:99+99:99 "GET /a HTTP/1.1" 200 3600.0`,
		`10.0.0.1 - - [29/Feb/2026:24:00:60 -2359] "GET / HTTP/1.1" 200 0 "-" "-" 3600`,
		"",
	} {
		f.Add(s)
	}
	formats := []*format{combinedFormat, commonFormat}
	for _, p := range fuzzFormats {
		fm, err := compileFormat(p)
		if err != nil {
			f.Fatal(err)
		}
		formats = append(formats, fm)
	}
	f.Fuzz(func(t *testing.T, line string) {
		var scratch []byte
		for _, fm := range formats {
			r, ok := fm.parse([]byte(line), &scratch)
			noRequest := r.uri == nil && r.method == nil // a line of the format that logs no request
			if ok && !noRequest && (len(r.uri) == 0 || r.uri[0] != '/' || !validMethod(r.method)) {
				t.Errorf("%s parsed %q as %q %q", fm.name, line, r.method, r.uri)
			}
		}
		// The whole way, with every route kept, must not panic either, and the load's figures hold together.
		log := line + "\n" + strings.ReplaceAll(line, "\n", " ")
		for _, p := range append([]string{""}, fuzzFormats...) {
			m, err := ReadFrom(strings.NewReader(log), "fuzz.log", Options{Format: p, Keep: Keep{true, true, true, true}})
			if err == nil {
				checkLoad(t, m.Load)
			}
		}
	})
}

// checkLoad fails on figures that contradict each other.
func checkLoad(t *testing.T, l *Load) {
	t.Helper()
	bad := l.Timed+l.Untimed != l.Requests || l.ServiceTimed > l.Timed || l.P99RPS > l.PeakRPS || l.P99Concurrency > l.PeakConcurrency ||
		l.PeakMinuteRPS > l.PeakRPS || l.PeakConcurrency < 0 || l.P99RPS < 0 || l.P99Concurrency < 0 ||
		l.HasRate() && (l.SpanS < 2 || l.MeanRPS > l.PeakRPS || l.First.After(l.Last)) || !l.HasRate() && l.Note == ""
	if bad {
		t.Errorf("load %+v", *l)
	}
}

func FuzzCompileFormat(f *testing.F) {
	for _, p := range append(fuzzFormats, `$`, `${`, `${}`, `%`, `%{`, `%>`, `"\"`, `$uri$args$status`, `%U%q%s`) {
		f.Add(p, combined("GET", "/a", 200))
	}
	f.Fuzz(func(t *testing.T, pattern, line string) {
		fm, err := compileFormat(pattern)
		if err != nil {
			return
		}
		var scratch []byte
		fm.parse([]byte(line), &scratch)
	})
}
