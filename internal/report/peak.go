package report

import (
	"fmt"

	"github.com/phptune/phptune/internal/tune"
)

// peakRow is the recommendation against the access log's busiest second, in short: "212 req/s, about 14 workers
// at 66 ms a request; the pool of 8 serves 150 req/s: cannot hold it".
func peakRow(c *tune.PeakCheck) string {
	s := rate(c.PeakRPS) + " req/s"
	if c.Workers > 0 {
		s += fmt.Sprintf(", about %d workers at %s a request", c.Workers, us(c.ServiceUs))
	}
	s += fmt.Sprintf("; the pool of %d serves %s req/s: ", c.MaxChildren, rate(c.CapacityRPS))
	if c.Holds {
		return s + "holds it"
	}
	return s + "CANNOT hold it"
}
