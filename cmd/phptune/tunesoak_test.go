package main

import (
	"testing"
	"time"
)

// TestParseSoak: --soak takes a duration (on top of --budget) or off; unset is the default, a tenth of the
// budget when max_requests is decided. The soak itself runs on real servers in internal/tune's
// TestSoakFindsARealLeak, and its output from a real run is read back in internal/report's TestTuneSoakReadsRight.
func TestParseSoak(t *testing.T) {
	for _, c := range []struct {
		in   string
		want time.Duration
		bad  bool
	}{{"", 0, false}, {"off", -1, false}, {"90s", 90 * time.Second, false}, {"1h", time.Hour, false},
		{"0s", 0, true}, {"-5m", 0, true}, {"forever", 0, true}, {"10", 0, true}} {
		got, err := parseSoak(c.in)
		if (err != nil) != c.bad || got != c.want {
			t.Errorf("parseSoak(%q) = %s, %v; want %s, error %v", c.in, got, err, c.want, c.bad)
		}
	}
}
