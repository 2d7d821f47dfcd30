package accesslog

import (
	"testing"
	"time"
)

// stampOf parses one line with pattern ("" auto-detects) and gives the request, failing when the line does not
// parse at all.
func stampOf(t *testing.T, pattern, line string) request {
	t.Helper()
	r, ok := parserOf(t, pattern).parse([]byte(line))
	if !ok {
		t.Fatalf("%q does not parse with %q", line, pattern)
	}
	return r
}

func us(tm time.Time) int64 { return tm.UnixMicro() }

func TestTimeFormats(t *testing.T) {
	const req = `"GET /a HTTP/1.1" 200`
	utc := time.Date(2026, 11, 25, 14, 17, 23, 0, time.UTC)
	half := int64(500_000) // a stamp to the second is the middle of its second
	tests := []struct {
		name, pattern, line string
		at                  int64
		start, coarse       bool
		zone                int
	}{
		{"combined, $time_local", "", `203.0.113.7 - - [25/Nov/2026:14:17:23 +0000] ` + req + ` 5 "-" "ua"`,
			us(utc) + half, false, true, 0},
		{"common, a zone west of UTC", "", `127.0.0.1 - - [25/Nov/2026:07:17:23 -0700] ` + req + ` 5`,
			us(utc) + half, false, true, -7 * 3600},
		{"combined with an ISO 8601 stamp in the bracket", "", `10.0.0.1 - - [2026-11-25T15:17:23+01:00] ` + req + ` 5 "-" "ua"`,
			us(utc) + half, false, true, 3600},
		{"nginx $time_iso8601", `$remote_addr $time_iso8601 "$request" $status`, `10.0.0.1 2026-11-25T19:47:23+05:30 ` + req,
			us(utc) + half, false, true, 5*3600 + 1800},
		{"nginx $time_iso8601 with a fraction and Z", `$time_iso8601 "$request" $status`, `2026-11-25T14:17:23.250Z ` + req,
			us(utc) + 250_000, false, false, 0},
		{"nginx $msec", `$msec "$request" $status`, `1795616243.123 ` + req,
			1795616243_123_000, false, false, 0},
		{"nginx $time_local outside brackets, a space inside it", `$time_local $remote_addr "$request" $status`,
			`25/Nov/2026:14:17:23 +0000 10.0.0.1 ` + req, us(utc) + half, false, true, 0},
		{"Apache %t: when the request began", `%h %l %u %t \"%r\" %>s %b`, `192.0.2.1 - - [25/Nov/2026:14:17:23 +0000] ` + req + ` 12`,
			us(utc) + half, true, true, 0},
		{"Apache's millisecond example", `%{%d/%b/%Y %T}t.%{msec_frac}t %{%z}t \"%r\" %>s`,
			`25/Nov/2026 14:17:23.042 +0000 ` + req, us(utc) + 42_000, true, false, 0},
		{"Apache %{sec}t", `%{sec}t \"%r\" %>s`, `1795616243 ` + req, 1795616243_000_000 + half, true, true, 0},
		{"Apache %{msec}t", `%{msec}t \"%r\" %>s`, `1795616243123 ` + req, 1795616243_123_000, true, false, 0},
		{"Apache %{end:usec}t: when it ended", `%{end:usec}t \"%r\" %>s`, `1795616243123456 ` + req, 1795616243_123_456, false, false, 0},
		{"Apache %{%Y-%m-%d %H:%M:%S}t, no zone: taken as UTC", `[%{%Y-%m-%d %H:%M:%S}t] \"%r\" %>s`,
			`[2026-11-25 14:17:23] ` + req, us(utc) + half, true, true, 0},
		{"Apache RFC 1123 with GMT", `%{%a, %d %b %Y %H:%M:%S %Z}t \"%r\" %>s`, `Wed, 25 Nov 2026 14:17:23 GMT ` + req,
			us(utc) + half, true, true, 0},
		{"Apache %D and 12-hour clock", `%{%D %I:%M:%S %p}t \"%r\" %>s`, `11/25/26 02:17:23 PM ` + req,
			us(utc) + half, true, true, 0},
		{"Apache %{%e %B %Y %T}t: a space-padded day, a full month", `%{%e %B %Y %T}t \"%r\" %>s`, ` 5 November 2026 14:17:23 ` + req,
			us(utc.AddDate(0, 0, -20)) + half, true, true, 0},
		{"Apache %s", `%{%s}t \"%r\" %>s`, `1795616243 ` + req, 1795616243_000_000 + half, true, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := stampOf(t, tt.pattern, tt.line)
			if !r.stamped || r.at != tt.at || r.start != tt.start || r.coarse != tt.coarse {
				t.Errorf("stamp %v at %d start %v coarse %v; want at %d (%s) start %v coarse %v", r.stamped, r.at, r.start, r.coarse,
					tt.at, time.UnixMicro(tt.at).UTC(), tt.start, tt.coarse)
			}
			if string(r.uri) != "/a" || r.status != 200 {
				t.Errorf("request %q %d", r.uri, r.status)
			}
			if z := tt.zone; (z != 0 || r.zoned) && r.zone != z {
				t.Errorf("zone %d, want %d", r.zone, z)
			}
		})
	}
}

// A time the layout cannot read leaves the line as it was (its request counts), without a stamp.
func TestTimeUnreadKeepsTheLine(t *testing.T) {
	for _, tt := range []struct{ name, pattern, line string }{
		{"garbage in the bracket", "", `10.0.0.1 - - [yesterday at noon] "GET /a HTTP/1.1" 200 5 "-" "ua"`},
		{"month out of range", "", `10.0.0.1 - - [25/Foo/2026:14:17:23 +0000] "GET /a HTTP/1.1" 200 5 "-" "ua"`},
		{"hour out of range", "", `10.0.0.1 - - [25/Nov/2026:25:17:23 +0000] "GET /a HTTP/1.1" 200 5 "-" "ua"`},
		{"a directive not read (%j)", `%{%Y %j}t \"%r\" %>s`, `2026 329 "GET /a HTTP/1.1" 200`},
		{"text after the stamp in its field", `[$time_local] "$request" $status`, `[25/Nov/2026:14:17:23 +0000 CET] "GET /a HTTP/1.1" 200`},
		{"no time in the format", `"$request" $status`, `"GET /a HTTP/1.1" 200`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := stampOf(t, tt.pattern, tt.line)
			if r.stamped || string(r.uri) != "/a" {
				t.Errorf("stamped %v at %d, uri %q", r.stamped, r.at, r.uri)
			}
		})
	}
}

func TestDaysFromCivil(t *testing.T) {
	for _, d := range []time.Time{time.Unix(0, 0).UTC(), time.Date(2000, 2, 29, 0, 0, 0, 0, time.UTC),
		time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC), time.Date(2100, 3, 1, 0, 0, 0, 0, time.UTC),
		time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)} {
		if got := daysFromCivil(d.Year(), int(d.Month()), d.Day()); got*86400 != d.Unix() {
			t.Errorf("%s: day %d, want %d", d.Format(time.DateOnly), got, d.Unix()/86400)
		}
	}
}
