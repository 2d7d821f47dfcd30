package check

import (
	"math"

	"github.com/phptune/phptune/internal/measure"
)

// Workers' memory growth per request: each worker's private memory (USS) against its own request count, a
// series per worker life, estimated by measure.EstimateGrowth (the soak's rule: pooled block slopes, growth shown
// only when steady in both halves and in most workers). What check adds: its own status requests are taken out
// of a worker's count, a worker's first warmupRequests are left out, and growth is reported only when the
// slope's lower bound (z = 3) projects past growthFloor (or half a worker's size) within the horizon.
// TestGrowthErrorRates simulates the rule's error rates on check's windows.

const (
	warmupRequests = 20
	// HorizonNever is the horizon of a pool that never recycles its workers (pm.max_requests = 0): growth is
	// projected over a thousand requests.
	HorizonNever = 1000
	growthFloor  = measure.GrowthFloor
	growthZ      = 3.0
)

// workerSeries splits the reads into one series per worker life: by pid, restarted when php-fpm's count goes
// back (a recycled worker given the same pid). A worker's count includes check's own status requests it served
// (each counts twice, as in accepted conn: the request and its kept connection's close); those are taken out,
// so that growth is per request of the app's.
func workerSeries(obs []observation, statusPath string) []measure.WorkerSeries {
	tr := measure.SeriesTracker{Warm: warmupRequests}
	raw := map[int]int64{} // pid -> php-fpm's count at its last read
	own := map[int]int64{} // pid -> check's requests it served before this read
	for _, o := range obs {
		for _, p := range o.status.Processes {
			if last, seen := raw[p.PID]; seen && p.Requests < last {
				tr.Close(p.PID) // recycled: a new life
				own[p.PID] = 0
			}
			raw[p.PID] = p.Requests
			served := own[p.PID]
			if ownRequest(p, statusPath) {
				own[p.PID] += ownAccepted
				served++ // this read is counted already, its close not yet
			}
			if m, ok := o.mem[p.PID]; ok {
				tr.Add(p.PID, p.Requests-served, m.uss)
			}
		}
	}
	return tr.Series
}

// growthOf measures the workers' growth per request; nil when no worker served enough requests to tell.
func growthOf(w window, statusPath string, maxRequests int) *Growth {
	m := measure.EstimateGrowth(workerSeries(w.obs, statusPath))
	if !m.Known() {
		return nil
	}
	g := &Growth{PerRequest: math.Round(m.PerRequest), Lower: math.Round(m.PerRequest - growthZ*m.SE), Shown: m.Shown,
		FirstHalf: math.Round(m.FirstHalf), SecondHalf: math.Round(m.SecondHalf), Workers: m.Workers, Growing: m.Growing,
		Requests: m.Requests, Horizon: int64(maxRequests)}
	if g.Horizon <= 0 {
		g.Horizon = HorizonNever
	}
	g.Projected = int64(g.PerRequest) * g.Horizon
	return g
}

// growthLimit is the growth within the horizon that makes a finding: measure.GrowthRoom, the room tune recycles
// workers for.
func growthLimit(meanUSS int64) int64 { return measure.GrowthRoom(meanUSS) }

// Leaking says whether the growth is shown steady and is large enough to report.
func (g *Growth) Leaking(meanUSS int64) bool {
	return g != nil && g.Shown && g.PerRequest > 0 && g.Lower*float64(g.Horizon) >= float64(growthLimit(meanUSS))
}
