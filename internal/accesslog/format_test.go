package accesslog

import (
	"math"
	"strings"
	"testing"
)

type parsed struct {
	method, uri string
	status      int
	seconds     float64
	timed       bool
}

// parserOf is a line parser for pattern ("" auto-detects).
func parserOf(t *testing.T, pattern string) *lineParser {
	t.Helper()
	p := &lineParser{}
	if pattern != "" {
		f, err := compileFormat(pattern)
		if err != nil {
			t.Fatalf("compile %q: %v", pattern, err)
		}
		p.f = f
	}
	return p
}

// parseOne parses one line with pattern ("" auto-detects) and says which format matched.
func parseOne(t *testing.T, pattern, line string) (parsed, string, bool) {
	t.Helper()
	p := parserOf(t, pattern)
	r, ok := p.parse([]byte(line))
	return parsed{string(r.method), string(r.uri), r.status, r.seconds, r.timed}, p.name(), ok
}

func TestParseFormats(t *testing.T) {
	apacheD := `%h %l %u %t \"%r\" %>s %b \"%{Referer}i\" \"%{User-Agent}i\" %D`
	tests := []struct {
		name, pattern, line string
		want                parsed
		format              string
	}{
		{"nginx combined", "",
			`203.0.113.7 - - [10/Oct/2024:13:55:36 +0000] "GET /post/123?ref=home HTTP/1.1" 200 5123 "https://example.com/" "Mozilla/5.0 (X11; Linux x86_64) Chrome/126.0"`,
			parsed{"GET", "/post/123?ref=home", 200, 0, false}, "combined"},
		{"nginx combined, \\x22 in agent", "",
			`203.0.113.7 - - [10/Oct/2024:13:55:36 +0000] "GET / HTTP/2.0" 304 0 "-" "bot \x22v2\x22"`,
			parsed{"GET", "/", 304, 0, false}, "combined"},
		{"apache combined, escaped quotes", "",
			`192.0.2.1 - frank [10/Oct/2000:13:55:36 -0700] "GET /apache_pb.php?q=\"x\" HTTP/1.0" 200 2326 "http://www.example.com/start.html" "Mozilla/4.08 \"quoted\" [en] (Win98; I ;Nav)"`,
			parsed{"GET", `/apache_pb.php?q=\"x\"`, 200, 0, false}, "combined"},
		{"apache vhost_combined", "",
			`www.example.com:443 192.0.2.1 - - [10/Oct/2000:13:55:36 -0700] "GET /shop HTTP/1.1" 200 - "-" "curl/8.5.0"`,
			parsed{"GET", "/shop", 200, 0, false}, "combined"},
		{"common", "",
			`127.0.0.1 - - [10/Oct/2000:13:55:36 -0700] "POST /login.php HTTP/1.0" 302 -`,
			parsed{"POST", "/login.php", 302, 0, false}, "common"},
		{"combined + $request_time", "",
			combined("GET", "/a", 200) + " 0.123",
			parsed{"GET", "/a", 200, 0.123, true}, "combined"},
		{"combined + request and upstream time", "",
			combined("GET", "/a", 200) + ` "198.51.100.2" 0.045 0.044`,
			parsed{"GET", "/a", 200, 0.045, true}, "combined"},
		{"combined + rt= and urt=", "",
			combined("GET", "/a", 200) + ` rt=0.250 uct="0.000" uht="0.240" urt="0.240"`,
			parsed{"GET", "/a", 200, 0.25, true}, "combined"},
		{"combined + request_time=", "",
			combined("GET", "/a", 200) + ` host=example.com request_time=1.5`,
			parsed{"GET", "/a", 200, 1.5, true}, "combined"},
		{"combined + upstream list only", "",
			combined("GET", "/a", 200) + ` urt="0.120, 0.050"`,
			parsed{"GET", "/a", 200, 0.17, true}, "combined"},
		{"combined + integer is no time", "",
			combined("GET", "/a", 200) + ` 523`,
			parsed{"GET", "/a", 200, 0, false}, "combined"},
		{"common + time", "",
			`127.0.0.1 - - [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.0" 200 12 0.010`,
			parsed{"GET", "/", 200, 0.01, true}, "common"},
		{"nginx pattern, time in the middle",
			`$remote_addr [$time_local] "$request" $status $request_time $body_bytes_sent "$http_user_agent"`,
			`10.0.0.1 [10/Oct/2024:13:55:36 +0000] "GET /shop/cart HTTP/2.0" 200 0.532 1234 "curl/8.0"`,
			parsed{"GET", "/shop/cart", 200, 0.532, true}, ""},
		{"nginx pattern, upstream time as fallback",
			`$remote_addr "$request" $status $request_time $upstream_response_time`,
			`10.0.0.1 "GET /a HTTP/1.1" 200 - 0.300, 0.100`,
			parsed{"GET", "/a", 200, 0.4, true}, ""},
		{"nginx pattern, braces and method/uri",
			`${remote_addr}|${request_method}|${request_uri}|${status}`,
			`10.0.0.1|HEAD|/x?y=1|200`,
			parsed{"HEAD", "/x?y=1", 200, 0, false}, ""},
		{"nginx $uri$is_args$args without args",
			`$remote_addr $request_method $uri$is_args$args $status`,
			`10.0.0.1 GET /x- 200`,
			parsed{"GET", "/x", 200, 0, false}, ""},
		{"nginx $uri$is_args$args with args",
			`$remote_addr $request_method $uri$is_args$args $status`,
			`10.0.0.1 GET /x?a=1 200`,
			parsed{"GET", "/x?a=1", 200, 0, false}, ""},
		{"nginx $uri?$args without args",
			`$remote_addr $uri?$args $status`,
			`10.0.0.1 /x?- 200`,
			parsed{"GET", "/x", 200, 0, false}, ""},
		{"nginx json",
			`{"uri":"$request_uri","status":$status,"rt":$request_time}`,
			`{"uri":"/a?q=\"x\"","status":200,"rt":0.003}`,
			parsed{"GET", `/a?q=\"x\"`, 200, 0.003, true}, ""},
		{"apache %D", apacheD,
			`192.0.2.1 - - [10/Oct/2000:13:55:36 -0700] "GET /index.php HTTP/1.1" 200 2326 "-" "Mozilla/5.0 \"x\"" 152000`,
			parsed{"GET", "/index.php", 200, 0.152, true}, ""},
		{"apache quoted config string", `"%h %t \"%r\" %>s %T"`,
			`192.0.2.1 [10/Oct/2000:13:55:36 -0700] "GET /slow HTTP/1.1" 200 2`,
			parsed{"GET", "/slow", 200, 2, true}, ""},
		{"apache %t then space, %U%q, %{ms}T", `%h %t %m %U%q %>s %{ms}T`,
			`1.2.3.4 [10/Oct/2000:13:55:36 -0700] GET /a?b=1 200 15`,
			parsed{"GET", "/a?b=1", 200, 0.015, true}, ""},
		{"apache %U%q without query, %{us}T", `%h %t %m %U%q %s %{us}T`,
			`1.2.3.4 [10/Oct/2000:13:55:36 -0700] GET /a 200 1500`,
			parsed{"GET", "/a", 200, 0.0015, true}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, name, ok := parseOne(t, tt.pattern, tt.line)
			if !ok {
				t.Fatalf("line did not parse: %s", tt.line)
			}
			if math.Abs(got.seconds-tt.want.seconds) > 1e-9 {
				t.Errorf("seconds = %v, want %v", got.seconds, tt.want.seconds)
			}
			got.seconds = tt.want.seconds
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
			if tt.format != "" && name != tt.format {
				t.Errorf("format = %q, want %q", name, tt.format)
			}
		})
	}
}

func TestParseBadLines(t *testing.T) {
	// Lines of the format whose request is none of the app's: parsed, with no URI (dropped as no request).
	for _, line := range []string{
		`192.0.2.1 - - [10/Oct/2000:13:55:36 -0700] "-" 408 0 "-" "-"`,
		`192.0.2.1 - - [10/Oct/2000:13:55:36 -0700] "\x16\x03\x01\x02\x00\x01\x00\x01\xFC\x03\x03" 400 157 "-" "-"`,
		`192.0.2.1 - - [10/Oct/2000:13:55:36 -0700] "GET http://proxy.example/ HTTP/1.1" 200 0 "-" "-"`,
		`192.0.2.1 - - [10/Oct/2000:13:55:36 -0700] "get /a HTTP/1.1" 200 0 "-" "-"`,
		`192.0.2.1 - - [10/Oct/2000:13:55:36 -0700] "GET /a" 200 0 "-" "-"`,
	} {
		if got, _, ok := parseOne(t, "", line); !ok || got.uri != "" || got.status < 100 {
			t.Errorf("%q: %+v, %v: want a line without a request", line, got, ok)
		}
	}
	bad := []string{
		`192.0.2.1 - - [10/Oct/2000:13:55:36 -0700] "GET /a HTTP/1.1" abc 0 "-" "-"`,
		`Oct 10 13:55:36 host nginx: something else`,
		`[10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.1" 200 0`,
		`1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.1`,
	}
	for _, line := range bad {
		if got, _, ok := parseOne(t, "", line); ok {
			t.Errorf("parsed %q as %+v", line, got)
		}
	}
}

func TestCompileFormatErrors(t *testing.T) {
	for pattern, want := range map[string]string{
		"plain text":              "no $variable",
		"$remote_addr$status":     "no text between",
		"$remote_addr $status":    "no request URI",
		`%h %{Referer i`:          "unclosed",
		`%h %r %`:                 "incomplete",
		`%h %>s "%{User-agent}i"`: "no request URI",
	} {
		_, err := compileFormat(pattern)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("compileFormat(%q) = %v, want an error with %q", pattern, err, want)
		}
	}
}

func TestCustomFormatRead(t *testing.T) {
	log := `10.0.0.1 [10/Oct/2024:13:55:36 +0000] "GET /post/1 HTTP/2.0" 200 0.100 1234 "curl/8.0"
10.0.0.1 [10/Oct/2024:13:55:37 +0000] "GET /post/2 HTTP/2.0" 200 0.300 1234 "curl/8.0"
127.0.0.1 - - [10/Oct/2000:13:55:36 -0700] "GET /post/3 HTTP/1.0" 200 12
`
	pattern := `$remote_addr [$time_local] "$request" $status $request_time $body_bytes_sent "$http_user_agent"`
	m := readString(t, log, Options{Format: pattern})
	if m.Format != pattern || m.Lines != 3 || m.Unparsed != 1 || !m.HasTime {
		t.Fatalf("format %q lines %d unparsed %d time %v", m.Format, m.Lines, m.Unparsed, m.HasTime)
	}
	r := m.Routes[0]
	if r.Pattern != "/post/{n}" || r.Count != 2 || math.Abs(r.MeanTime-0.2) > 1e-9 {
		t.Errorf("route %+v", r)
	}
}

func TestFormatByName(t *testing.T) {
	common := `127.0.0.1 - - [10/Oct/2000:13:55:36 -0700] "GET /a HTTP/1.0" 200 2326` + "\n"
	m := readString(t, common+logOf("/b"), Options{Format: "common"})
	if m.Format != "common" || m.Kept != 2 || m.Unparsed != 0 {
		t.Errorf("format %q kept %d unparsed %d", m.Format, m.Kept, m.Unparsed)
	}
	m = readString(t, common+logOf("/b"), Options{Format: "combined"})
	if m.Format != "combined" || m.Kept != 1 || m.Unparsed != 1 {
		t.Errorf("format %q kept %d unparsed %d", m.Format, m.Kept, m.Unparsed)
	}
}
