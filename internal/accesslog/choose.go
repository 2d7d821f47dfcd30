package accesslog

import (
	"math"
	"sort"
)

const (
	defaultTop      = 10
	defaultExamples = 3
	defaultCoverage = 0.95
	// timePicks is how many of the costliest routes by total time are added even beyond Top: a rare
	// but slow page can load the server more than a frequent fast one.
	timePicks = 3
	// weightTotal is about what the weights of a mix add up to.
	weightTotal = 1000
)

func (o Options) withDefaults() Options {
	if o.Top <= 0 {
		o.Top = defaultTop
	}
	if o.Examples <= 0 {
		o.Examples = defaultExamples
	}
	if o.Coverage <= 0 {
		o.Coverage = defaultCoverage
	}
	return o
}

// choose ranks routes by requests and takes them until Top or Coverage, adds the costliest by time,
// and gives each its examples with weights. It returns the chosen routes and the share of kept
// requests they hold.
func choose(routes []*route, kept int, hasTime bool, o Options) ([]Route, float64) {
	sort.Slice(routes, func(i, j int) bool { return before(routes[i], routes[j]) })
	why := map[*route]string{}
	var picked []*route
	taken := 0
	for _, r := range routes {
		if len(picked) >= o.Top || float64(taken) >= o.Coverage*float64(kept) {
			break
		}
		picked = append(picked, r)
		why[r] = "requests"
		taken += r.count
	}
	if hasTime {
		for _, r := range costliest(routes, timePicks) {
			if why[r] == "" {
				picked = append(picked, r)
				why[r] = "time"
				taken += r.count
			} else {
				why[r] = "requests+time"
			}
		}
	}
	return describe(picked, why, routes, kept, o.Examples), float64(taken) / float64(kept)
}

// before orders by requests, then by first appearance so equal counts keep the log's order.
func before(a, b *route) bool {
	if a.count != b.count {
		return a.count > b.count
	}
	return a.seq < b.seq
}

// costliest is the n routes with the largest total time (those with any).
func costliest(routes []*route, n int) []*route {
	byTime := append([]*route(nil), routes...)
	sort.SliceStable(byTime, func(i, j int) bool { return byTime[i].totalTime() > byTime[j].totalTime() })
	var out []*route
	for _, r := range byTime {
		if len(out) == n || r.totalTime() <= 0 {
			break
		}
		out = append(out, r)
	}
	return out
}

// describe turns the picked routes into Routes; shares are of all kept requests (and their time),
// weights of the picked routes' requests.
func describe(picked []*route, why map[*route]string, all []*route, kept, examples int) []Route {
	allTime, sum := 0.0, 0
	for _, r := range all {
		allTime += r.totalTime()
	}
	for _, r := range picked {
		sum += r.count
	}
	out := make([]Route, 0, len(picked))
	for _, r := range picked {
		rt := Route{
			Method: r.method, Pattern: r.pattern, Count: r.count, MeanTime: r.meanTime(), Why: why[r],
			Share:    float64(r.count) / float64(kept),
			Examples: weigh(r, examples, float64(r.count)/float64(sum)),
		}
		if allTime > 0 {
			rt.TimeShare = r.totalTime() / allTime
		}
		out = append(out, rt)
	}
	return out
}

// weigh gives the route's most requested URIs (ties by first seen) the route's share of weightTotal,
// split by their counts, at least 1 each so every shown URI is replayed.
func weigh(r *route, n int, share float64) []Example {
	hits := append([]*hit(nil), r.hits...)
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].count != hits[j].count {
			return hits[i].count > hits[j].count
		}
		return hits[i].seq < hits[j].seq
	})
	hits = hits[:min(n, len(hits))]
	shown := 0
	for _, h := range hits {
		shown += h.count
	}
	out := make([]Example, len(hits))
	for i, h := range hits {
		w := int(math.Round(share * float64(h.count) / float64(shown) * weightTotal))
		out[i] = Example{URI: h.uri, Count: h.count, Weight: max(1, w)}
	}
	return out
}
