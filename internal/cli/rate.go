package cli

import (
	"fmt"
	"math"
	"strconv"
)

// Rate is tune's --rate as a flag's value: requests a second into Rate, or "peak" (the access log's busiest
// second) into Peak.
type Rate struct {
	Rate *float64
	Peak *bool
}

func (r Rate) String() string {
	if r.Peak != nil && *r.Peak {
		return "peak"
	}
	if r.Rate == nil {
		return "0"
	}
	return strconv.FormatFloat(*r.Rate, 'g', -1, 64)
}

// Set reads a rate or peak.
func (r Rate) Set(s string) error {
	if s == "peak" {
		*r.Rate, *r.Peak = 0, true
		return nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !(v > 0) || math.IsInf(v, 0) {
		return fmt.Errorf("want requests a second, such as 300, or peak (the access log's busiest second)")
	}
	*r.Rate, *r.Peak = v, false
	return nil
}

// Type is bench's: --rate means requests a second everywhere ("peak" is one more way to give it).
func (r Rate) Type() string { return "float64" }
