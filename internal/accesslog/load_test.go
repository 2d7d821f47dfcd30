package accesslog

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

// base is the first second of the constructed logs: 2026-11-25 14:13:20 UTC.
const base = 1795616000

// msecFormat stamps each line with nginx's $msec, at the request's end, to the millisecond.
const msecFormat = `$msec "$request" $status $request_time`

// msecLine is a request ending at base + at seconds that took dur seconds.
func msecLine(at, dur float64) string {
	return fmt.Sprintf("%.3f \"GET /p HTTP/1.1\" 200 %.3f\n", base+at, dur)
}

// knownLoad is a log of 200 seconds whose figures are worked out by hand (see TestLoadKnownPeak), as two files
// (seconds 100 to 199, then 0 to 99 with the line of second 10 after that of second 20).
func knownLoad() (newer, older string) {
	var a, b strings.Builder
	for s := range 200 {
		var lines string
		switch s {
		case 50: // the busiest second: 10 requests of 0.2 s each
			lines = strings.Repeat(msecLine(50.5, 0.2), 10)
		case 120: // 8 of 0.1 s
			lines = strings.Repeat(msecLine(120.3, 0.1), 8)
		case 150: // 6 of 1.5 s, from 149.4 to 150.9: 0.6 s each in second 149, 0.9 s in 150
			lines = strings.Repeat(msecLine(150.9, 1.5), 6)
		case 10:
			continue
		default: // one request of 0.5 s, from .3 to .8
			lines = msecLine(float64(s)+0.8, 0.5)
		}
		if s >= 100 {
			a.WriteString(lines)
		} else {
			b.WriteString(lines)
		}
		if s == 20 {
			b.WriteString(msecLine(10.8, 0.5)) // second 10's line, logged late
		}
	}
	return a.String(), b.String()
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// TestLoadKnownPeak reads a log whose figures are known: 200 seconds, 221 requests. Requests a second: 197
// seconds of 1, and 10, 8 and 6 (seconds 50, 120, 150): peak 10 at second 50; the 99th percentile second is
// rank ceil(0.99 x 200) = 198 of the sorted counts, 6. The busiest 60 seconds are 91 to 150 (58 + 8 + 6 = 72):
// 1.2 req/s. Concurrency: 0.5 in the seconds of one request, 2.0 in second 50, 0.8 in 120, 0.5 + 6 x 0.6 = 4.1 in
// 149, 6 x 0.9 = 5.4 in 150: peak 5.4, p99 (rank 198 of 196 x 0.5, 0.8, 2.0, 4.1, 5.4) 2.0. Service: 110.3 s
// over 221 requests; p99 is rank ceil(218.79) = 219 of 8 x 0.1, 10 x 0.2, 197 x 0.5, 6 x 1.5: 1.5 s.
func TestLoadKnownPeak(t *testing.T) {
	newer, older := knownLoad()
	// Rotated files given newest first, the older one gzipped.
	a := writeFile(t, "access.log", []byte(newer))
	b := writeFile(t, "access.log.1.gz", gzipped(t, older))
	m, err := Read([]string{a, b}, Options{Format: msecFormat})
	if err != nil {
		t.Fatal(err)
	}
	l := m.Load
	at := func(s int64) time.Time { return time.Unix(base+s, 0).UTC() }
	for _, c := range []struct {
		what      string
		got, want any
	}{
		{"requests", l.Requests, 221}, {"timed", l.Timed, 221}, {"untimed", l.Untimed, 0}, {"out of order", l.OutOfOrder, 1},
		{"span", l.SpanS, 200.0}, {"gaps", l.Gaps, 0}, {"first", l.First, at(0)}, {"last", l.Last, at(199)},
		{"peak", l.PeakRPS, 10.0}, {"peak at", l.PeakAt, at(50)}, {"p99 second", l.P99RPS, 6.0},
		{"peak minute at", l.PeakMinuteAt, at(91)}, {"service from", l.ServiceFrom, ServiceRequest},
		{"service timed", l.ServiceTimed, 221}, {"peak concurrency at", l.PeakConcurrencyAt, at(150)},
		{"to the second", l.ToTheSecond, false}, {"workers at 0.25 s", l.WorkersAt(0.25), 3},
		{"workers at 0.1 s", l.WorkersAt(0.1), 1},
	} {
		if c.got != c.want {
			t.Errorf("%s: %v, want %v", c.what, c.got, c.want)
		}
	}
	for _, c := range []struct {
		what      string
		got, want float64
	}{
		{"mean rate", l.MeanRPS, 221.0 / 200}, {"peak minute", l.PeakMinuteRPS, 72.0 / 60},
		{"peak concurrency", l.PeakConcurrency, 5.4}, {"p99 concurrency", l.P99Concurrency, 2.0},
		{"service mean", l.ServiceMeanUs, 110.3e6 / 221}, {"service p99", l.ServiceP99Us, 1.5e6},
	} {
		if !near(c.got, c.want) {
			t.Errorf("%s: %v, want %v", c.what, c.got, c.want)
		}
	}
	// Any order of the lines gives the same figures: in order (the seconds kept sorted as they come), shuffled
	// (found through an index, as for the newer file first).
	lines := strings.SplitAfter(older+newer, "\n")
	inOrder := readString(t, older+newer, Options{Format: msecFormat}).Load
	for i := range lines {
		j := (i * 7919) % len(lines)
		lines[i], lines[j] = lines[j], lines[i]
	}
	shuffled := readString(t, strings.Join(lines, ""), Options{Format: msecFormat}).Load
	shuffled.OutOfOrder, inOrder.OutOfOrder, l.OutOfOrder = 0, 0, 0
	if !reflect.DeepEqual(shuffled, l) || !reflect.DeepEqual(inOrder, l) {
		t.Errorf("shuffled:\n%+v\nin order:\n%+v\nnewer file first:\n%+v", *shuffled, *inOrder, *l)
	}
}

// Stamps to the second are the middle of their second; Apache's %t is when a request began.
func TestLoadStampAnchors(t *testing.T) {
	local := func(s int, dur float64) string {
		return fmt.Sprintf("10.0.0.1 - - [%s] \"GET /p HTTP/1.1\" 200 5 \"-\" \"ua\" %.3f\n",
			time.Unix(base+int64(s), 0).UTC().Format("02/Jan/2006:15:04:05 -0700"), dur)
	}
	// nginx: four requests of 0.2 s logged at second 0, ending at 0.5: 0.8 in flight; one of 0.8 s at second 2:
	// from 2.5 - 0.8 = 1.7, 0.3 in second 1 and 0.5 in second 2.
	l := readString(t, local(0, 0.2)+local(0, 0.2)+local(0, 0.2)+local(0, 0.2)+local(2, 0.8), Options{}).Load
	if !l.ToTheSecond || l.PeakRPS != 4 || !near(l.PeakConcurrency, 0.8) || l.SpanS != 3 || !l.PeakConcurrencyAt.Equal(time.Unix(base, 0)) {
		t.Errorf("nginx: %+v", *l)
	}
	// Apache, %{msec}t and %D: a request began at 0.000 and took 1.5 s: counted in second 0; 1.0 in flight in
	// second 0 and 0.5 in second 1. Another from 3.2 for 0.3 s.
	apache := `%{msec}t \"%r\" %>s %D`
	l = readString(t, fmt.Sprintf("%d000 \"GET /p HTTP/1.1\" 200 1500000\n%d200 \"GET /p HTTP/1.1\" 200 300000\n", base, base+3),
		Options{Format: apache}).Load
	if !l.First.Equal(time.Unix(base, 0)) || !l.Last.Equal(time.Unix(base+3, 0)) || !near(l.PeakConcurrency, 1.0) ||
		!l.PeakConcurrencyAt.Equal(time.Unix(base, 0)) || l.SpanS != 4 || !near(l.P99Concurrency, 1.0) {
		t.Errorf("apache: %+v", *l)
	}
}

func TestLoadGapsSingleSecondAndNoStamps(t *testing.T) {
	var b strings.Builder
	for s := range 10 {
		b.WriteString(msecLine(float64(s)+0.5, 0.1))
		b.WriteString(msecLine(float64(7200+s)+0.5, 0.1)) // two hours later: a rotation missing
	}
	l := readString(t, b.String(), Options{Format: msecFormat}).Load
	if l.Gaps != 1 || l.GapS != 7200-10 || l.SpanS != 20 || l.PeakRPS != 1 || !near(l.MeanRPS, 1) {
		t.Errorf("gap: %+v", *l)
	}
	l = readString(t, strings.Repeat(msecLine(3.25, 0.1), 5), Options{Format: msecFormat}).Load
	if l.HasRate() || l.Timed != 5 || !strings.Contains(l.Note, "same second") || l.WorkersAt(0.1) != 0 {
		t.Errorf("one second: %+v", *l)
	}
	if lines := l.loadLines(); len(lines) != 1 || !strings.Contains(lines[0], "no rate over time can be given") {
		t.Errorf("one second: %q", lines)
	}
	l = readString(t, logOf("/a", "/b"), Options{Format: `$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent"`}).Load
	if l.HasRate() || l.Timed != 2 {
		t.Errorf("two lines in one second: %+v", *l)
	}
	l = readString(t, `"GET /a HTTP/1.1" 200`+"\n", Options{Format: `"$request" $status`}).Load
	if l.HasRate() || l.Untimed != 1 || !strings.Contains(l.Note, "no request has a time stamp") {
		t.Errorf("no stamps: %+v", *l)
	}
}

// Lines whose stamp cannot be read count in the mix and are counted apart in the load.
func TestLoadUntimedLines(t *testing.T) {
	log := logOf("/a") + `10.0.0.1 - - [not a time] "GET /b HTTP/1.1" 200 5 "-" "ua"` + "\n" +
		strings.ReplaceAll(logOf("/c"), "13:55:36", "13:55:38")
	m := readString(t, log, Options{})
	if m.Kept != 3 || m.Load.Timed != 2 || m.Load.Untimed != 1 || m.Load.SpanS != 3 {
		t.Errorf("kept %d, load %+v", m.Kept, *m.Load)
	}
	if s := strings.Join(m.Load.loadLines(), "\n"); !strings.Contains(s, "left out of the rates: 1 requests without a time stamp read") {
		t.Errorf("summary:\n%s", s)
	}
}

// A clock change: the same hour logged in two offsets is read as the instants it was.
func TestLoadZones(t *testing.T) {
	line := func(stamp string) string {
		return `10.0.0.1 - - [` + stamp + `] "GET /a HTTP/1.1" 200 5 "-" "ua"` + "\n"
	}
	log := line("25/Oct/2026:02:59:58 +0200") + line("25/Oct/2026:02:59:59 +0200") + line("25/Oct/2026:02:00:00 +0100") +
		line("25/Oct/2026:02:00:01 +0100")
	l := readString(t, log, Options{}).Load
	if l.SpanS != 4 || l.PeakRPS != 1 || l.OutOfOrder != 0 || strings.Join(l.Zones, " ") != "+0200 +0100" ||
		l.First.Format("15:04:05 -0700") != "02:59:58 +0200" || l.Last.Format("15:04:05") != "03:00:01" {
		t.Errorf("%+v", *l)
	}
}

// The load counts what reaches PHP: every method and status, health checks and excluded URIs; not static files
// (unless kept) nor lines without a request.
func TestLoadCountsWhatReachesPHP(t *testing.T) {
	log := logOf("/a", "/style.css", "/healthz", "/admin/x") + combined("POST", "/form", 200) + "\n" + combined("GET", "/gone", 404) + "\n" +
		`10.0.0.1 - - [10/Oct/2024:13:55:36 +0000] "-" 408 0 "-" "-"` + "\n"
	if l := readString(t, log, Options{}).Load; l.Requests != 5 {
		t.Errorf("requests %d, want 5", l.Requests)
	}
	if l := readString(t, log, Options{Keep: Keep{Static: true}}).Load; l.Requests != 6 {
		t.Errorf("static kept: requests %d, want 6", l.Requests)
	}
}

// Upstream times are php-fpm's: they are the service time where logged.
func TestLoadUpstreamService(t *testing.T) {
	pattern := `$msec "$request" $status $request_time $upstream_response_time`
	log := fmt.Sprintf("%d.500 \"GET /a HTTP/1.1\" 200 0.900 0.400\n%d.500 \"GET /b HTTP/1.1\" 200 0.300 -\n", base, base+1)
	l := readString(t, log, Options{Format: pattern}).Load
	if l.ServiceFrom != ServiceMixed || !near(l.ServiceMeanUs, 0.35e6) || !near(l.PeakConcurrency, 0.4) {
		t.Errorf("%+v", *l)
	}
	l = readString(t, strings.Split(log, "\n")[0]+"\n"+strings.ReplaceAll(strings.Split(log, "\n")[1], " -", " 0.200")+"\n",
		Options{Format: pattern}).Load
	if l.ServiceFrom != ServiceUpstream || !near(l.ServiceMeanUs, 0.3e6) {
		t.Errorf("%+v", *l)
	}
}

func TestLoadSummaryLines(t *testing.T) {
	newer, older := knownLoad()
	m := readString(t, older+newer, Options{Format: msecFormat})
	var b bytes.Buffer
	m.Summary(&b)
	out := b.String()
	for _, want := range []string{
		"load: 221 requests to PHP over 3m20s, 14:13:20 to 14:16:39 (no zone logged); mean 1.1 req/s\n",
		"  peak 10 req/s (the busiest second, 14:14:10), 99th percentile second 6.0 req/s, busiest minute 1.2 req/s\n",
		"  concurrency at its peak 5.4 (p99 second 2.0) from request times\n",
		"  service time 499 ms mean, 1500 ms p99: at the mean, the peak needs about 5 workers\n",
		"  1 line out of time order, each counted at its stamp\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	// The widest figures still fit 120 columns: days, thousands a second, every note.
	wide := &Load{Requests: 12345678, Timed: 12345678, Untimed: 1234567, OutOfOrder: 123456, SpanS: 40 * 86400, Gaps: 12,
		GapS: 9 * 86400, Zones: []string{"+0100", "+0200"}, First: time.Unix(base, 0), Last: time.Unix(base+40*86400, 0),
		MeanRPS: 3.5, PeakRPS: 9999, PeakAt: time.Unix(base+86400, 0), P99RPS: 8888, PeakMinuteRPS: 7777,
		ServiceFrom: ServiceMixed, ServiceTimed: 12345677, ServiceMeanUs: 123456, ServiceP99Us: 12345678,
		PeakConcurrency: 1234.5, P99Concurrency: 999.9}
	for _, line := range wide.loadLines() {
		if len(line) > 120 {
			t.Errorf("%d columns: %s", len(line), line)
		}
	}
}

// The 100,000-line log of the benchmark gives its figures: 60 seconds (its stamps cycle through one minute).
func TestLoadOfBenchLog(t *testing.T) {
	m, err := ReadFrom(bytes.NewReader(benchLog(100_000)), "bench.log", Options{})
	if err != nil {
		t.Fatal(err)
	}
	l := m.Load
	if l.SpanS != 60 || l.Timed != l.Requests || l.PeakRPS < l.MeanRPS || l.PeakConcurrency <= 0 || l.ServiceFrom != ServiceRequest {
		t.Errorf("%+v", *l)
	}
	if testing.Verbose() {
		m.Summary(os.Stderr)
	}
}
