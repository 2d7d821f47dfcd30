package report

import (
	"fmt"

	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/tune"
)

// peakRow is the recommendation against the access log's busiest second, in short, as the pool's row says it:
// "the log's peak: 212 req/s (13.9 in flight in the log), about 14 workers at 66.00ms a request; the pool of 8
// serves 150 req/s: CANNOT hold it".
func peakRow(c *tune.PeakCheck) string {
	s := "the log's peak: " + rate(c.PeakRPS) + " req/s"
	if c.LogConcurrency > 0 {
		s += fmt.Sprintf(" (%.1f in flight in the log)", c.LogConcurrency)
	}
	switch {
	case c.ServiceUs > 0:
		s += fmt.Sprintf(", about %d workers at %s a request", c.Workers, us(c.ServiceUs))
	case c.Workers > 0:
		s += fmt.Sprintf(", about %d workers", c.Workers)
	}
	s += fmt.Sprintf("; the pool of %d serves %s req/s: ", c.MaxChildren, rate(c.CapacityRPS))
	switch {
	case c.Holds:
		return s + "holds it"
	case c.MostRPS > 0:
		return s + fmt.Sprintf("CANNOT hold it, nor did any size measured (at most %s req/s)", rate(c.MostRPS))
	}
	return s + "CANNOT hold it"
}

// peakOnPoolRow says whether the pool holds the log's peak on the pool's row, when r has both; false when it has
// no pool row to say it on (a pinned pool).
func peakOnPoolRow(r *tune.Result) bool {
	if r.PeakCheck == nil {
		return false
	}
	for _, k := range r.Knobs {
		if k.Name == knob.MaxChildren().Name {
			return true
		}
	}
	return false
}
