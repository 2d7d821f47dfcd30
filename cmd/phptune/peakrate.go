package main

import (
	"fmt"
	"math"
	"strconv"

	"github.com/phptune/phptune/internal/accesslog"
	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/tune"
)

// rateValue is tune's --rate: requests a second, or "peak", the access log's busiest second.
type rateValue struct {
	rate *float64
	peak *bool
}

func (r rateValue) String() string {
	if r.peak != nil && *r.peak {
		return "peak"
	}
	if r.rate == nil {
		return "0"
	}
	return strconv.FormatFloat(*r.rate, 'g', -1, 64)
}

func (r rateValue) Set(s string) error {
	if s == "peak" {
		*r.rate, *r.peak = 0, true
		return nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !(v > 0) || math.IsInf(v, 0) {
		return fmt.Errorf("want requests a second, such as 300, or peak (the access log's busiest second)")
	}
	*r.rate, *r.peak = v, false
	return nil
}

// Type is bench's: --rate means requests a second everywhere ("peak" is one more way to give it).
func (r rateValue) Type() string { return "float64" }

// logLoad hands tune the access log's load and, for --rate peak, takes the rate from it: the busiest second,
// not the 99th percentile second, as the pool must hold the peak the log shows ("server reached
// pm.max_children" is what the busiest seconds bring), and a goal met at it is met at every second of the log.
func (f tuneFlags) logLoad(o *tune.Options) error {
	l := f.mix.logLoad()
	o.LogLoad = l
	if !f.ratePeak {
		return nil
	}
	switch {
	case l == nil:
		return exitcode.UsageErrorf("--rate peak takes the rate from the access log's busiest second: give --from-access-log, or --rate N")
	case !l.HasRate():
		return exitcode.UsageErrorf("--rate peak: the access log gives no rate (%s): give --rate N", l.Note)
	}
	o.Rate = l.PeakRPS
	return nil
}

// logLoad is the load of the access logs read, nil when none was.
func (m *mixFlags) logLoad() *accesslog.Load {
	if m.read == nil || m.read.mix == nil || len(m.accessLogs) == 0 {
		return nil
	}
	return m.read.mix.Load
}
