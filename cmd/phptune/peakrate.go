package main

import (
	"github.com/phptune/phptune/internal/accesslog"
	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/tune"
)

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
