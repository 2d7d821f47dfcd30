package tune

import (
	"errors"
	"reflect"
	"testing"

	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/measure"
)

// TestSizeFromSweep: the pool before any race is the knee, capped by the workers the memory holds (each at the
// larger of its private high-water and PHP's peak) and below the OOM killer's concurrency; a pin keeps the
// starting size; the CPU trials' load is capped by the memory alone.
func TestSizeFromSweep(t *testing.T) {
	const mib = 1 << 20
	swept := func(knee, oom int) *Saturation {
		return &Saturation{Knee: knee, OOM: oom, Points: []Point{{Concurrency: 1}, {Concurrency: 2}, {Concurrency: 4}, {Concurrency: 8}}}
	}
	pinned := map[string]string{knob.MaxChildren().Name: "5"}
	cases := []struct {
		name      string
		sat       *Saturation
		mem       sweepMemory
		o         Options
		cpu       int
		want      PoolSize // the fields checked
		wantCPU   int
		wantUsage bool
	}{
		{"no memory given", swept(8, 0), sweepMemory{peakUSS: 30 * mib, shared: 20 * mib}, Options{}, 4,
			PoolSize{Knee: 8, Initial: 8, Chosen: 8, PerWorkerBytes: 30 * mib}, 4, false},
		{"no knee", swept(0, 0), sweepMemory{}, Options{}, 4, PoolSize{Initial: 1, Chosen: 1}, 4, false},
		{"memory under the knee", swept(8, 0), sweepMemory{peakUSS: 30 * mib, shared: 20 * mib, peakRequest: 10 * mib},
			Options{Memory: 100 * mib, MemoryFrom: "--memory"}, 4,
			PoolSize{Knee: 8, Memory: 100 * mib, MemoryFrom: "--memory", MemoryLimit: 2, PerWorkerBytes: 30 * mib, Initial: 2, Chosen: 2,
				Note: "memory limits the pool below the CPU knee"}, 2, false},
		{"PHP's peak counts", swept(2, 0), sweepMemory{peakUSS: 10 * mib, shared: 20 * mib, peakRequest: 40 * mib},
			Options{Memory: 1000 * mib}, 4, PoolSize{Knee: 2, Memory: 1000 * mib, MemoryLimit: 24, PerWorkerBytes: 40 * mib, Initial: 2, Chosen: 2}, 4, false},
		{"the OOM killer", swept(16, 16), sweepMemory{}, Options{}, 4,
			PoolSize{Knee: 16, MemoryLimit: 8, Initial: 8, Chosen: 8, Note: "the OOM killer struck at 16 connections in the sweep: at most 8 children"}, 4, false},
		{"the OOM killer above the memory's limit", swept(16, 16), sweepMemory{peakUSS: 20 * mib, shared: 20 * mib}, Options{Memory: 100 * mib}, 8,
			PoolSize{Knee: 16, Memory: 100 * mib, MemoryLimit: 4, PerWorkerBytes: 20 * mib, Initial: 4, Chosen: 4,
				Note: "the OOM killer struck at 16 connections in the sweep: at most 8 children"}, 4, false},
		{"pinned", swept(8, 0), sweepMemory{}, Options{Pins: pinned, Base: knob.Config{MaxChildren: 5}}, 4,
			PoolSize{Knee: 8, Initial: 8, Chosen: 5, Note: pinnedWords, State: StatePinned}, 4, false},
		{"no worker fits", swept(8, 0), sweepMemory{peakUSS: 30 * mib, shared: 90 * mib}, Options{Memory: 100 * mib}, 4,
			PoolSize{Knee: 8, Memory: 100 * mib, PerWorkerBytes: 30 * mib}, 4, true},
	}
	for _, c := range cases {
		ps, cpu, err := sizeFromSweep(c.sat, c.mem, c.o, c.cpu)
		var usage *exitcode.Error
		if (err != nil) != c.wantUsage || (err != nil && !errors.As(err, &usage)) {
			t.Errorf("%s: error %v", c.name, err)
		}
		got := PoolSize{Knee: ps.Knee, Memory: ps.Memory, MemoryFrom: ps.MemoryFrom, MemoryLimit: ps.MemoryLimit, PerWorkerBytes: ps.PerWorkerBytes,
			Initial: ps.Initial, Chosen: ps.Chosen, Note: ps.Note, State: ps.State}
		if !reflect.DeepEqual(got, c.want) || cpu != c.wantCPU {
			t.Errorf("%s: %+v, CPU trials at %d; want %+v, %d", c.name, got, cpu, c.want, c.wantCPU)
		}
		if ps.SharedBytes != c.mem.shared || ps.PeakUSSBytes != c.mem.peakUSS || ps.PeakRequestBytes != c.mem.peakRequest {
			t.Errorf("%s: memory figures %+v, from %+v", c.name, ps, c.mem)
		}
	}
}

// TestSweepMemoryOf: a worker's memory is the high-water of the sweep's trials alone.
func TestSweepMemoryOf(t *testing.T) {
	got := sweepMemoryOf([]TrialRecord{
		{Phase: "saturation", WorkerUSS: 10, WorkerShared: 5, FPM: &measure.FPMDelta{PeakRequestMemory: 7}},
		{Phase: "saturation", WorkerUSS: 12, WorkerShared: 4},
		{Phase: "race", WorkerUSS: 99, WorkerShared: 99, FPM: &measure.FPMDelta{PeakRequestMemory: 99}},
	})
	if want := (sweepMemory{peakUSS: 12, shared: 5, peakRequest: 7}); got != want {
		t.Errorf("%+v, want %+v", got, want)
	}
}
