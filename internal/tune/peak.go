package tune

import (
	"fmt"
	"math"

	"github.com/phptune/phptune/internal/accesslog"
	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/stats"
)

// UseLogLoad hands o the access log's load l (nil: no log read) and, for --rate peak (peak), takes the rate from
// it: the busiest second, not the 99th percentile second, as the pool must hold the peak the log shows ("server
// reached pm.max_children" is what the busiest seconds bring), and a goal met at it is met at every second of the
// log.
func (o *Options) UseLogLoad(l *accesslog.Load, peak bool) error {
	o.LogLoad = l
	if !peak {
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

// PeakCheck is the recommendation against the access log's busiest second (Options.LogLoad): the workers the
// peak keeps busy at the app's service time here, and the requests a second the recommended pool was measured
// to serve.
type PeakCheck struct {
	PeakRPS float64 `json:"peak_rps"`
	// ServiceUs is a request's time on this host, alone: one connection's requests in the saturation sweep (0
	// when the sweep has no such point); Workers is PeakRPS x ServiceUs, rounded up (Little's law, no margin:
	// the busiest second is the margin over the rest).
	ServiceUs   float64 `json:"service_us"`
	Workers     int     `json:"workers_needed"`
	MaxChildren int     `json:"max_children"`
	// LogConcurrency is the requests in flight in the log's busiest second by its own times (Load's
	// PeakConcurrency: the production host's, queueing included; 0 without times). It is shown beside Workers,
	// which decides: here is where the pool was measured. It decides when there is no service time here.
	LogConcurrency float64 `json:"log_concurrency,omitempty"`
	// CapacityRPS is the recommendation's goodput as measured; CapacityFrom says by which trials.
	CapacityRPS  float64 `json:"capacity_rps"`
	CapacityFrom string  `json:"capacity_from"`
	// MemoryLimit is the children that fit in memory, when fewer than Workers and the pool is short of them.
	MemoryLimit int `json:"memory_limit,omitempty"`
	// MostRPS is the most any pool size served here (the sweep's points, the sizes' race), when below the
	// peak: then no pool size on this host holds it.
	MostRPS float64 `json:"most_rps,omitempty"`
	Holds   bool    `json:"holds"`
	Note    string  `json:"note"`
}

// checkPeak compares the sized pool with the log's peak, when the log gave one: a pool that cannot hold it is a
// warning, the check's sentence.
func (t *tuner) checkPeak() {
	l := t.o.LogLoad
	if !l.HasRate() {
		return
	}
	c := &PeakCheck{PeakRPS: l.PeakRPS, MaxChildren: t.best.MaxChildren, LogConcurrency: l.PeakConcurrency}
	if s := t.serviceTime(); s > 0 {
		c.ServiceUs = s * 1e6
		c.Workers = l.WorkersAt(s)
	} else {
		c.Workers = int(math.Ceil(l.PeakConcurrency - 1e-9))
	}
	c.CapacityRPS, c.CapacityFrom = t.capacity()
	if ps := t.pool; ps != nil && ps.MemoryLimit > 0 && ps.MemoryLimit < c.Workers && c.MaxChildren < c.Workers {
		c.MemoryLimit = ps.MemoryLimit
	}
	if most := max(t.mostServed(), c.CapacityRPS); most > 0 && most < c.PeakRPS {
		c.MostRPS = most
	}
	c.Holds = c.CapacityRPS >= c.PeakRPS && c.MaxChildren >= c.Workers
	c.Note = c.sentence()
	t.log.peak = c
	if !c.Holds {
		t.warn(c.Note)
	}
}

// sentence says it as a person reads it: "the log's peak of 212 req/s needs about 14 workers at 66 ms a request;
// the pool of 8 serves 150 req/s here: it cannot hold the peak".
func (c *PeakCheck) sentence() string {
	s := fmt.Sprintf("the log's peak of %.0f req/s", c.PeakRPS)
	if c.LogConcurrency > 0 {
		s += fmt.Sprintf(" (at most %.1f requests in flight by the log's times)", c.LogConcurrency)
	}
	switch {
	case c.ServiceUs > 0:
		s += fmt.Sprintf(" needs about %d workers at %s a request", c.Workers, ms(c.ServiceUs))
	case c.Workers > 0:
		s += fmt.Sprintf(" needs about %d workers", c.Workers)
	}
	s += fmt.Sprintf("; the pool of %d serves %.0f req/s here", c.MaxChildren, c.CapacityRPS)
	switch {
	case c.Holds:
		return s + ": it holds the peak"
	case c.MemoryLimit > 0 && c.MostRPS > 0:
		return s + fmt.Sprintf(": it cannot hold the peak; memory holds %d children, and no pool size measured here served more than %.0f req/s",
			c.MemoryLimit, c.MostRPS)
	case c.MemoryLimit > 0:
		return s + fmt.Sprintf(": it cannot hold the peak; memory holds %d children", c.MemoryLimit)
	case c.MostRPS > 0:
		return s + fmt.Sprintf(": it cannot hold the peak, and no pool size measured here could: the most any served was %.0f req/s "+
			"(the peak needs about %.1f hosts like this one, or cheaper requests)", c.MostRPS, c.PeakRPS/c.MostRPS)
	case c.MaxChildren >= c.Workers:
		return s + ": it cannot hold the peak; the workers suffice, the host is short"
	}
	return s + ": it cannot hold the peak"
}

// mostServed is the most goodput any pool size was measured to serve: the sweep's medians and the sizes' race.
func (t *tuner) mostServed() float64 {
	var most float64
	if sat := t.sat; sat != nil {
		for _, p := range sat.Points {
			most = max(most, p.Median)
		}
	}
	if ps := t.pool; ps != nil {
		for _, sr := range ps.Sizes {
			most = max(most, sr.RPS)
		}
	}
	return most
}

func ms(us float64) string {
	if us < 10e3 {
		return fmt.Sprintf("%.1f ms", us/1e3)
	}
	return fmt.Sprintf("%.0f ms", us/1e3)
}

// serviceTime is a request's time on the app here, alone, in seconds: the inverse of one connection's goodput
// in the sweep (the mix's mean), 0 without that point.
func (t *tuner) serviceTime() float64 {
	if sat := t.sat; sat != nil {
		for _, p := range sat.Points {
			if p.Concurrency == 1 && p.Median > 0 {
				return 1 / p.Median
			}
		}
	}
	return 0
}

// capacity is the recommendation's goodput as measured, and by which trials: the larger of the final
// comparison's median and its size's in the pool sizes' race (under a load that fills the largest size), else
// the median of the trials of its configuration, else the sweep's point at its pool size or the largest below.
func (t *tuner) capacity() (float64, string) {
	var rps float64
	var from string
	if h := t.log.headline; h != nil && h.RecommendationRPS > 0 {
		rps, from = h.RecommendationRPS, fmt.Sprintf("the final comparison's median at %d connections", t.conc)
	}
	if ps := t.pool; ps != nil {
		for _, sr := range ps.Sizes {
			if sr.Size == t.best.MaxChildren && sr.RPS > rps {
				rps, from = sr.RPS, fmt.Sprintf("the pool sizes' race at %d connections", ps.Load)
			}
		}
	}
	if rps > 0 {
		return rps, from
	}
	var trials []float64
	cfg := t.best.String()
	for _, tr := range t.log.trials {
		if tr.Config == cfg && tr.Metric == MetricGoodput && !tr.Duet {
			trials = append(trials, tr.Goodput)
		}
	}
	if len(trials) > 0 {
		return stats.Median(trials), fmt.Sprintf("the median of its %d trials", len(trials))
	}
	var best Point
	if sat := t.sat; sat != nil {
		for _, p := range sat.Points {
			if p.Concurrency <= t.best.MaxChildren && p.Concurrency > best.Concurrency {
				best = p
			}
		}
	}
	return best.Median, fmt.Sprintf("the sweep at %d connections", best.Concurrency)
}
