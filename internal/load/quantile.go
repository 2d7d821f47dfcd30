package load

import (
	"math"
	"time"
)

// Quantile is a latency quantile of every request a run meant to make in its window, with a distribution-free
// 95% interval from the order statistics (microseconds).
type Quantile struct {
	Q      float64 `json:"q"`
	Value  float64 `json:"value_us"`
	Lo     float64 `json:"lo_us"`
	Hi     float64 `json:"hi_us"`
	N      int64   `json:"n"`      // requests counted: measured, in flight at the end, never sent
	Misses int64   `json:"misses"` // of them failed, unfinished or unsent: counted as taking the timeout
}

// QuantileOfAll is the latency quantile q (0.99) over every request of the window, failures included: a request
// that failed, was still in flight at the end, or was never sent counts as taking the timeout, and error responses
// (which the histogram holds) are assumed the fastest entries, so a fast 5xx never meets a latency goal. The
// interval covers the quantile with 95% confidence for independent requests (binomial order statistics).
func (r *Result) QuantileOfAll(q float64, timeout time.Duration) Quantile {
	if r.hist == nil {
		return Quantile{Q: q}
	}
	inHist := r.hist.TotalCount()
	notInHist := max(r.Requests-inHist, 0) // connection and protocol errors
	errInHist := max(r.Errors-notInHist, 0)
	out := Quantile{Q: q, Misses: r.Errors + r.InFlightAtEnd + r.Unsent}
	out.N = inHist + notInHist + r.InFlightAtEnd + r.Unsent
	if out.N == 0 {
		return out
	}
	ceiling := float64(timeout / time.Microsecond)
	at := func(rank int64) float64 {
		rank = min(max(rank, 1), out.N)
		if rank > out.N-out.Misses {
			return ceiling
		}
		k := rank + errInHist // the good entries of the histogram come after the errors
		return float64(r.hist.ValueAtQuantile(100 * float64(k) / float64(inHist)))
	}
	n := float64(out.N)
	half := 1.96 * math.Sqrt(n*q*(1-q))
	out.Value = at(int64(math.Ceil(q * n)))
	out.Lo = at(int64(math.Floor(q*n - half)))
	out.Hi = at(int64(math.Ceil(q*n+half)) + 1)
	return out
}
