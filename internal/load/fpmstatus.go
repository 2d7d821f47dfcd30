package load

import (
	"context"
	"fmt"
	"time"

	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/measure"
)

// StatusSource is where php-fpm's status page is read: a pool's address and the page's path.
type StatusSource struct{ network, address, path string }

// Read reads the status page, within 5 seconds.
func (s *StatusSource) Read(ctx context.Context) (*measure.FPMStatus, error) {
	c, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return measure.ReadFPMStatus(c, s.network, s.address, s.path)
}

// ParseStatusSource reads --fpm-status for a run on t: the page's /PATH on t's own pool (a FastCGI target), or
// fcgi://HOST:PORT/PATH or unix:/SOCK:/PATH.
func ParseStatusSource(v string, t Target) (*StatusSource, error) {
	if len(v) > 0 && v[0] == '/' {
		if t.Protocol != FastCGI {
			return nil, exitcode.UsageErrorf("--fpm-status %s: for an HTTP target give the pool's address too, as fcgi://HOST:PORT%s or unix:/SOCK:%s", v, v, v)
		}
		return &StatusSource{t.Network, t.Address, v}, nil
	}
	st, err := ParseTarget(v)
	if err != nil || st.Protocol != FastCGI {
		return nil, exitcode.UsageErrorf("--fpm-status %q: want /PATH, fcgi://HOST:PORT/PATH or unix:/SOCK:/PATH", v)
	}
	return &StatusSource{st.Network, st.Address, st.Script}, nil
}

// FPMWarnings says when the pool capped the run: php-fpm never multiplexes, so kept FastCGI connections beyond
// max_children wait for a worker.
func FPMWarnings(d measure.FPMDelta, before *measure.FPMStatus, t Target, conns int) []string {
	var w []string
	if d.MaxChildrenReached > 0 {
		w = append(w, fmt.Sprintf("php-fpm pool %q reached pm.max_children %d time(s) during the run: requests queued for a worker", d.Pool, d.MaxChildrenReached))
	}
	if t.Protocol == FastCGI && d.PM == "static" && conns > d.ProcessesBefore {
		w = append(w, fmt.Sprintf("%d connections > pm.max_children %d of static pool %q: each kept FastCGI connection holds a worker, so %d connection(s) waited",
			conns, d.ProcessesBefore, d.Pool, conns-d.ProcessesBefore))
	} else if t.Protocol == FastCGI && d.MaxChildrenReached > 0 && conns > d.ProcessesAfter {
		w = append(w, fmt.Sprintf("%d connections > the %d workers the pool could run: each kept FastCGI connection holds a worker, so the extra connections waited",
			conns, d.ProcessesAfter))
	}
	// The status page keeps the high-water mark since the pool started: only a rise belongs to this run.
	if d.MaxListenQueue > before.MaxListenQueue {
		why := ""
		if d.PM != "static" {
			why = " (a " + d.PM + " pool starts workers on demand)"
		}
		w = append(w, fmt.Sprintf("php-fpm's listen queue reached %d during the run, warm-up included: connections waited for a worker%s", d.MaxListenQueue, why))
	}
	return w
}

// Before reads the status page before a run of o (an error is a usage error: the page named is not there) and
// bounds o's pool by it (BoundByPool).
func (s *StatusSource) Before(ctx context.Context, o *Options) (*measure.FPMStatus, error) {
	before, err := s.Read(ctx)
	if err != nil {
		return nil, exitcode.WithCode(exitcode.Usage, err)
	}
	BoundByPool(o, before)
	return before, nil
}

// BoundByPool bounds a FastCGI run at a rate, without --max-inflight, at a static pool's size: a kept FastCGI
// connection holds a worker.
func BoundByPool(o *Options, before *measure.FPMStatus) {
	if o.Target.Protocol == FastCGI && o.Rate > 0 && o.MaxInflight == 0 && before.PM == "static" {
		o.MaxInflight = before.Workers()
	}
}

// After reads the status page after a run of o and notes in res what the pool did since before, or why it
// could not be read.
func (s *StatusSource) After(ctx context.Context, res *Result, before *measure.FPMStatus, o Options) {
	after, err := s.Read(ctx)
	if err != nil {
		res.Warnings = append(res.Warnings, "php-fpm status after the run: "+err.Error())
		return
	}
	res.noteFPM(before, after, o)
}

// noteFPM sets r's FPMStatus to the pool's delta over the run and adds FPMWarnings.
func (r *Result) noteFPM(before, after *measure.FPMStatus, o Options) {
	d := measure.Delta(before, after)
	r.FPMStatus = d
	r.Warnings = append(r.Warnings, FPMWarnings(d, before, o.Target, o.Connections)...)
}
