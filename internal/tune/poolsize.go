package tune

import (
	"context"
	"strconv"
	"time"

	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/experiment"
	"github.com/phptune/phptune/internal/knob"
)

// PoolSize records the three limits on pm.max_children and the choice.
type PoolSize struct {
	Knee         int   `json:"cpu_knee"`
	MemoryLimit  int   `json:"memory_limit"` // children that fit in --memory; 0 = not limiting
	Memory       int64 `json:"memory_bytes"`
	SharedBytes  int64 `json:"shared_bytes"`
	PeakUSSBytes int64 `json:"peak_uss_bytes"`
	// PeakRequestBytes is php-fpm's own figure: the largest peak memory of a request seen.
	PeakRequestBytes int64 `json:"peak_request_bytes"`
	// PerWorkerBytes is what each child is counted at: the larger of the two.
	PerWorkerBytes int64  `json:"per_worker_bytes"`
	Initial        int    `json:"initial"`
	Chosen         int    `json:"chosen"`
	Note           string `json:"note,omitempty"`
	// P99Checks are the open-loop checks of the latency goal that sized the pool, when there is a goal.
	P99Checks []P99Check `json:"p99_checks,omitempty"`

	// GrownPerWorkerBytes, when set, is what a worker grows to by pm.max_requests (the soak's growth per
	// request): larger than PerWorkerBytes, it is what MemoryLimit counts each child at.
	GrownPerWorkerBytes int64 `json:"grown_per_worker_bytes,omitempty"`
}

// poolSize sizes pm.max_children from the knee, capped by memory (shared memory plus children x peak private
// memory per worker), before any knob: the CPU knobs' arms run at that size. poolRace then raises it to meet a
// latency goal and races the pick against its neighbours (the knee of a few short trials is a noisy pick).
func (t *tuner) poolSize() error {
	ps := &PoolSize{Knee: t.res.Saturation.Knee, Memory: t.o.Memory}
	t.res.PoolSize = ps
	// Memory per worker from the sweep's largest load: private memory high-water, and the shared part once.
	for _, tr := range t.res.Trials {
		if tr.Phase == "saturation" {
			ps.PeakUSSBytes = max(ps.PeakUSSBytes, tr.WorkerUSS)
			ps.SharedBytes = max(ps.SharedBytes, tr.WorkerShared)
			if tr.FPM != nil {
				ps.PeakRequestBytes = max(ps.PeakRequestBytes, tr.FPM.PeakRequestMemory)
			}
		}
	}
	n := max(ps.Knee, 1)
	// A worker counts at the larger of its private memory's high-water and PHP's own peak for a request.
	ps.PerWorkerBytes = max(ps.PeakUSSBytes, ps.PeakRequestBytes)
	if t.o.Memory > 0 && ps.PerWorkerBytes > 0 {
		ps.MemoryLimit = int((t.o.Memory - ps.SharedBytes) / ps.PerWorkerBytes)
		if ps.MemoryLimit < 1 {
			return exitcode.UsageErrorf("--memory %d MiB does not hold one worker (%d MiB private at peak, %d MiB shared)",
				t.o.Memory>>20, ps.PerWorkerBytes>>20, ps.SharedBytes>>20)
		}
		if n > ps.MemoryLimit {
			n = ps.MemoryLimit
			ps.Note = "memory limits the pool below the CPU knee"
		}
	}
	ps.Initial = n
	t.best.MaxChildren = n
	if _, pinned := t.o.Pins[knob.MaxChildren().Name]; pinned {
		t.best.MaxChildren = t.o.Base.MaxChildren
		ps.Chosen, ps.Note = t.best.MaxChildren, "pinned"
	}
	ps.Chosen = t.best.MaxChildren
	return nil
}

// NotRemeasured is the pool size's note when the budget left no time to race it against its neighbours.
const NotRemeasured = "not re-measured: the budget ran out"

// poolRace raises the pool to meet the latency goal, when there is one, and races its size against its
// neighbours (unless pinned).
func (t *tuner) poolRace(ctx context.Context) error {
	ps := t.res.PoolSize
	if _, pinned := t.o.Pins[knob.MaxChildren().Name]; pinned {
		return nil
	}
	if t.o.P99 > 0 {
		if err := t.p99Limit(ctx, ps); err != nil {
			return err
		}
		ps.Initial = t.best.MaxChildren
	}
	floor := 0
	if t.o.P99 > 0 {
		floor = ps.Initial // with a latency goal, none below the size that met it
	}
	err := t.sizePool(ctx, ps.MemoryLimit, floor)
	ps.Chosen = t.best.MaxChildren
	return err
}

// sizePool races the best's pool size against its neighbours on the ladder, within memory and not below
// floor: its row comes after the CPU knobs' (cpuFirst).
func (t *tuner) sizePool(ctx context.Context, limit, floor int) error {
	k := knob.MaxChildren()
	var values []string
	for _, n := range knob.Neighbours(t.best.MaxChildren) {
		if (limit == 0 || n <= limit) && n >= floor {
			values = append(values, strconv.Itoa(n))
		}
	}
	if len(values) == 0 {
		t.res.Knobs = append(t.res.Knobs, KnobRow{Name: k.Name, Value: k.Get(t.best), From: k.Get(t.o.Base), Note: "no neighbour fits"})
		t.release(k.Name)
		return nil
	}
	arms := len(values) + 1
	_, later := cpuFirst(t.o.Knobs)
	spec := t.specOf(k)
	allow, least := t.allowance(k.Name, arms, arms, spec, names(later)), t.d.cost(spec, arms, arms)
	if allow < least {
		if t.left()-t.finalLeast() < least {
			t.res.Knobs = append(t.res.Knobs, KnobRow{Name: k.Name, Value: k.Get(t.best), From: k.Get(t.o.Base),
				Note: "not re-measured against its neighbours: the budget ran out (" + least.Round(time.Second).String() + " would have been needed at the least); the knee's size is kept"})
			if ps := t.res.PoolSize; ps != nil {
				ps.Note = NotRemeasured
			}
			t.release(k.Name)
			return nil
		}
		allow = least
	}
	t.release(k.Name)
	t.budget.Plan(experiment.Pairs(experiment.Race, arms))
	r, err := t.d.race(ctx, race{knob: k, from: t.best, values: values, allowance: allow, stretch: t.stretch(k.Name, names(later)),
		spec: spec})
	if r != nil {
		t.raceDone(r)
	}
	return err
}
