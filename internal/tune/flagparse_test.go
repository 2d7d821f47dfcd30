package tune

import (
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/accesslog"
	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/stack"
)

// TestParseSoak: --soak takes a duration (on top of --budget) or off; unset is the default, a tenth of the
// budget when max_requests is decided. The soak itself runs on real servers in TestSoakFindsARealLeak, and its
// output from a real run is read back in internal/report's TestTuneSoakReadsRight.
func TestParseSoak(t *testing.T) {
	for _, c := range []struct {
		in   string
		want time.Duration
		bad  bool
	}{{"", 0, false}, {"off", -1, false}, {"90s", 90 * time.Second, false}, {"1h", time.Hour, false},
		{"0s", 0, true}, {"-5m", 0, true}, {"forever", 0, true}, {"10", 0, true}} {
		got, err := ParseSoak(c.in)
		if (err != nil) != c.bad || got != c.want {
			t.Errorf("ParseSoak(%q) = %s, %v; want %s, error %v", c.in, got, err, c.want, c.bad)
		}
		if err != nil && exitcode.Of(err) != exitcode.Usage {
			t.Errorf("ParseSoak(%q): %v is not a usage error", c.in, err)
		}
	}
}

// TestSizeForPlace: --memory, when given, is the pool's memory as written (the place's CPUs still set nginx's
// workers); a size that is none, or none at all, is a usage error naming the flag, as is a cgroup not found.
func TestSizeForPlace(t *testing.T) {
	var o Options
	if err := o.SizeForPlace("", "1.5GiB"); err != nil {
		t.Fatal(err)
	}
	if o.Memory != 3<<29 || o.MemoryFrom != "--memory 1.5GiB" || o.Limits == nil || o.Stack.NginxWorkers != o.Limits.WholeCPUs() {
		t.Errorf("--memory 1.5GiB: memory %d from %q, limits %v, nginx workers %d", o.Memory, o.MemoryFrom, o.Limits, o.Stack.NginxWorkers)
	}
	o = Options{Stack: stack.Config{NginxWorkers: 3}}
	if err := o.SizeForPlace("", "512M"); err != nil || o.Memory != 512<<20 || o.Stack.NginxWorkers != 3 {
		t.Errorf("--memory 512M with 3 nginx workers set: %v, memory %d, nginx workers %d", err, o.Memory, o.Stack.NginxWorkers)
	}
	for _, c := range []struct{ cgroup, memory, want string }{
		{"", "lots", `--memory "lots"`}, {"", "0", `--memory "0"`}, {"", "-1G", `--memory "-1G"`},
		{"/no/such/cgroup/phptune-test", "1G", "--cgroup: "},
	} {
		var o Options
		err := o.SizeForPlace(c.cgroup, c.memory)
		if err == nil || !strings.Contains(err.Error(), c.want) || exitcode.Of(err) != exitcode.Usage {
			t.Errorf("--cgroup %q --memory %q: %v, want a usage error with %q", c.cgroup, c.memory, err, c.want)
		}
	}
}

// TestOrderText: the help's order is Order's: the CPU knobs (the ini directives given with --knob among them),
// the server before the pool size, the rest after it, and max_requests (decided by the soak, not raced) named last
// alone.
func TestOrderText(t *testing.T) {
	s := OrderText()
	cpu, rest, ok := strings.Cut(s, "; then on requests/s served, the server; then the pool size, max_children; then on requests/s served: ")
	if !ok || !strings.HasPrefix(cpu, "On CPU per request: ") || !strings.HasSuffix(s, "max_requests from workers' memory growth per request (--soak).") {
		t.Fatalf("order text %q", s)
	}
	if !strings.Contains(cpu, "opcache, ") || !strings.Contains(cpu, "ini directives given with --knob") ||
		!strings.HasPrefix(rest, "pm, ") || strings.Contains(cpu+rest, "max_children") || strings.Contains(cpu+rest, "server") || strings.Count(s, "max_requests") != 1 {
		t.Errorf("order text %q: want opcache and the ini directives among the CPU knobs, the server before the pool size, pm after it, "+
			"max_requests once", s)
	}
}

// TestUseScreener: the screener is profile's counters where valgrind, strace and php-cgi are installed; the
// missing program is said only where screening would run (--screen or a budget of ScreenBudget or more).
func TestUseScreener(t *testing.T) {
	urls := func() []load.MixItem { return []load.MixItem{{URI: "/", Weight: 1}} }
	short := Options{Budget: time.Minute}
	if missing := short.UseScreener(urls); missing != "" {
		t.Errorf("a 1-minute budget without --screen: %q is said missing", missing)
	}
	for _, o := range []Options{{Budget: ScreenBudget}, {Budget: time.Minute, ForceScreen: true}} {
		missing := o.UseScreener(urls)
		if (o.Screen == nil) != (missing != "") {
			t.Errorf("budget %s, forced %v: screener %v, missing %q: want one of them", o.Budget, o.ForceScreen, o.Screen, missing)
		}
		if o.Screen != nil && (o.Screen.Instructions == nil || o.Screen.Syscalls == nil) {
			t.Errorf("screener %+v: not profile's counters", o.Screen)
		}
	}
}

// TestUseLogLoad: the access log's load goes to the options; --rate peak takes the rate from its busiest second,
// and is a usage error without a log, or with a log that gives no rate (saying why).
func TestUseLogLoad(t *testing.T) {
	l := &accesslog.Load{PeakRPS: 420}
	o := Options{Rate: 100}
	if err := o.UseLogLoad(l, false); err != nil || o.LogLoad != l || o.Rate != 100 {
		t.Errorf("without peak: %v, load %v, rate %g; want the load and --rate's 100", err, o.LogLoad, o.Rate)
	}
	if err := o.UseLogLoad(l, true); err != nil || o.Rate != 420 {
		t.Errorf("--rate peak: %v, rate %g; want the busiest second's 420", err, o.Rate)
	}
	for _, c := range []struct {
		l    *accesslog.Load
		want string
	}{{nil, "give --from-access-log, or --rate N"}, {&accesslog.Load{Note: "no time stamps"}, "gives no rate (no time stamps)"}} {
		var o Options
		if err := o.UseLogLoad(c.l, true); exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), c.want) || o.Rate != 0 {
			t.Errorf("--rate peak with %+v: %v, rate %g; want a usage error with %q", c.l, err, o.Rate, c.want)
		}
	}
}
