package tune

import (
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/accesslog"
	"github.com/phptune/phptune/internal/knob"
)

// peakTuner is a tuner after its races: the sweep's one-connection point says a request takes 66 ms, the final
// comparison that the recommendation serves 150 req/s, memory holds 10 children.
func peakTuner(peak float64, children int) *tuner {
	t := &tuner{o: Options{LogLoad: &accesslog.Load{PeakRPS: peak, MeanRPS: 1}}, best: knob.Config{MaxChildren: children}, conc: 8,
		sat: &Saturation{Points: []Point{{Concurrency: 1, Median: 1 / 0.066}, {Concurrency: 8, Median: 140}}},
		log: ledger{headline: &Headline{RecommendationRPS: 150}}, pool: &PoolSize{MemoryLimit: 10}}
	return t
}

func TestCheckPeak(t *testing.T) {
	// 212 req/s x 66 ms = 13.99: 14 workers, more than the 8 of the pool and the 10 memory holds; 150 < 212.
	tr := peakTuner(212, 8)
	tr.o.LogLoad.PeakConcurrency = 20.5
	tr.checkPeak()
	c := tr.log.peak
	if c == nil || c.Holds || c.Workers != 14 || c.MaxChildren != 8 || c.CapacityRPS != 150 || c.MemoryLimit != 10 {
		t.Fatalf("check %+v", c)
	}
	want := "the log's peak of 212 req/s (at most 20.5 requests in flight by the log's times) needs about 14 workers at " +
		"66 ms a request; the pool of 8 serves 150 req/s here: it cannot hold the peak; memory holds 10 children, and no pool size " +
		"measured here served more than 150 req/s"
	if c.Note != want || len(tr.log.warnings) != 1 || tr.log.warnings[0] != want || c.CapacityFrom != "the final comparison's median at 8 connections" {
		t.Errorf("note %q\nwarnings %q\nwant %q", c.Note, tr.log.warnings, want)
	}
	// 100 req/s: 7 workers, in a pool of 8 serving 150: it holds, no warning.
	tr = peakTuner(100, 8)
	tr.checkPeak()
	if c := tr.log.peak; !c.Holds || c.Workers != 7 || c.MemoryLimit != 0 || len(tr.log.warnings) != 0 || !strings.HasSuffix(c.Note, ": it holds the peak") {
		t.Errorf("check %+v, warnings %q", c, tr.log.warnings)
	}
	// 180 req/s needs 12 workers; a pool of 16 has them, but serves 150, the most any size served: the host is
	// short, not the pool.
	tr = peakTuner(180, 16)
	tr.checkPeak()
	if c := tr.log.peak; c.Holds || c.MostRPS != 150 || !strings.HasSuffix(c.Note, ": it cannot hold the peak, and no pool size measured "+
		"here could: the most any served was 150 req/s (the peak needs about 1.2 hosts like this one, or cheaper requests)") {
		t.Errorf("check %+v", c)
	}
	// The same, where the sizes' race saw a size serve 200: the pool, not the host, falls short.
	tr = peakTuner(180, 16)
	tr.pool.Sizes = []SizeResult{{Size: 32, RPS: 200}}
	tr.checkPeak()
	if c := tr.log.peak; c.Holds || c.MostRPS != 0 || !strings.HasSuffix(c.Note, ": it cannot hold the peak; the workers suffice, the host is short") {
		t.Errorf("check %+v", c)
	}
	// The sizes' race served more at the pool's size, under a load that fills it: that figure.
	tr = peakTuner(212, 8)
	tr.pool.Sizes, tr.pool.Load = []SizeResult{{Size: 4, RPS: 120}, {Size: 8, RPS: 160}, {Size: 16, RPS: 170}}, 16
	tr.checkPeak()
	if c := tr.log.peak; c.CapacityRPS != 160 || c.CapacityFrom != "the pool sizes' race at 16 connections" {
		t.Errorf("check %+v", c)
	}
	// Without a final comparison, the sweep's point at the pool's size or below.
	tr = peakTuner(212, 8)
	tr.log.headline = nil
	tr.checkPeak()
	if c := tr.log.peak; c.CapacityRPS != 140 || c.CapacityFrom != "the sweep at 8 connections" {
		t.Errorf("check %+v", c)
	}
	// Without the sweep's one-connection point, the log's own concurrency: 20.5 in flight, 21 workers.
	tr = peakTuner(212, 24)
	tr.o.LogLoad.PeakConcurrency = 20.5
	tr.sat.Points = tr.sat.Points[1:]
	tr.checkPeak()
	if c := tr.log.peak; c.Workers != 21 || c.ServiceUs != 0 || c.Holds || !strings.Contains(c.Note, "in flight by the log's times) needs about 21 workers;") ||
		!strings.HasSuffix(c.Note, "no pool size measured here could: the most any served was 150 req/s (the peak needs about 1.4 hosts like this one, or cheaper requests)") {
		t.Errorf("check %+v", c)
	}
	// A log without a rate: no check.
	tr = peakTuner(0, 8)
	tr.checkPeak()
	if tr.log.peak != nil {
		t.Errorf("check %+v without a rate", tr.log.peak)
	}
}
