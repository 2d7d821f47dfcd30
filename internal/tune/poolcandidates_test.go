package tune

import (
	"slices"
	"testing"
)

// sweep is a saturation curve: medians at concurrency 1, 2, 4, ...
func sweep(peak int, medians ...float64) *Saturation {
	sat := &Saturation{Peak: peak}
	for i, m := range medians {
		sat.Points = append(sat.Points, Point{Concurrency: 1 << i, Median: m})
	}
	return sat
}

func TestPoolCandidates(t *testing.T) {
	for _, c := range []struct {
		name         string
		sat          *Saturation
		limit, floor int
		want         []int
	}{
		// Rising to 8, flat after: from half the peak up to the peak, and one past it to make three.
		{"knee", sweep(8, 100, 190, 350, 400, 395, 398), 0, 0, []int{4, 8, 16}},
		{"knee, three below", sweep(8, 100, 250, 350, 400, 395, 398), 0, 0, []int{2, 4, 8}},
		// A busy machine's flat curve that peaks at 1 by chance: the points after it are raced too.
		{"flat, peak at 1", sweep(1, 300, 295, 290), 0, 0, []int{1, 2, 4}},
		{"flat, peak at 2", sweep(2, 300, 310, 305, 300), 0, 0, []int{1, 2, 4}},
		// Memory allows 6: the largest that fits stands in for the peak.
		{"memory", sweep(32, 50, 150, 250, 390, 400, 401, 399), 6, 0, []int{4, 6}},
		// A latency goal met at 8: none below.
		{"floor", sweep(8, 100, 250, 350, 400, 395, 398), 0, 8, []int{8, 16, 32}},
		// At most five: the smallest four and the largest, so that a sweep whose noisy peak lies far out still
		// races the small sizes (a 3-minute demo's: 135 to 365 req/s from 1 to 128 connections).
		{"many", sweep(128, 100, 150, 200, 250, 280, 300, 320, 350), 0, 0, []int{4, 8, 16, 32, 128}},
		// The top is the first point within the margin (3%) of the peak: past it, sizes could only be within too.
		{"many, flat top", sweep(64, 200, 250, 280, 290, 300, 305, 310, 300), 0, 0, []int{1, 2, 4, 8, 32}},
		{"demo, 2% from 16 to 32", sweep(32, 231, 350, 452, 498, 532, 544), 0, 0, []int{2, 4, 8, 16}},
		{"demo, peak far out", sweep(128, 135, 189, 252, 262, 296, 352, 307, 365), 0, 0, []int{2, 4, 8, 16, 128}},
	} {
		if got := poolCandidates(c.sat, 0, c.limit, c.floor, 0.03); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
