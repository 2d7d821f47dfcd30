package tune

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/arms"
	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/experiment"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/stats"
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
	PerWorkerBytes int64 `json:"per_worker_bytes"`
	// MemoryFrom says what set Memory: --memory, the host's available memory, or a cgroup's limit.
	MemoryFrom string      `json:"memory_from,omitempty"`
	OtherPools []OtherPool `json:"other_pools,omitempty"`
	Initial    int         `json:"initial"`
	Chosen     int         `json:"chosen"`
	Note       string      `json:"note,omitempty"`
	// State is how the size was come by where no race chose it: pinned, or not_raced (the budget could not
	// decide the sizes' race, or left no time to re-measure); "" when raced. Readers use StateOf.
	State RowState `json:"state,omitempty"`
	// P99Checks are the open-loop checks of the latency goal that sized the pool, when there is a goal.
	P99Checks []P99Check `json:"p99_checks,omitempty"`
	// Sizes are the sizes raced, smallest first, each against the best of them; Load is the connections every
	// size was loaded with (enough to fill the largest).
	Sizes []SizeResult `json:"sizes,omitempty"`
	Load  int          `json:"load,omitempty"`
	// Decided says the chosen size was shown within the minimum effect of the best; RangeLo and RangeHi bound
	// the sizes that serve within it, shown or not yet shown worse.
	Decided bool `json:"decided"`
	RangeLo int  `json:"range_lo,omitempty"`
	RangeHi int  `json:"range_hi,omitempty"`
	// Kept says an open race kept the starting configuration's size: it lay within the range, and no size was
	// shown better than the others by more than the margin.
	Kept bool `json:"kept,omitempty"`

	// GrownPerWorkerBytes, when set, is what a worker grows to by pm.max_requests (the soak's growth per
	// request): larger than PerWorkerBytes, it is what MemoryLimit counts each child at.
	GrownPerWorkerBytes int64 `json:"grown_per_worker_bytes,omitempty"`
}

// SizeResult is one pool size of the sizes' race.
type SizeResult struct {
	Size int `json:"size"`
	// Status: winner (the pick), within (shown within the margin of the best), open (not yet shown either way),
	// dropped (shown worse than another size), error.
	Status string            `json:"status"`
	Note   string            `json:"note,omitempty"`
	RPS    float64           `json:"rps"` // median goodput of its trials
	Rounds int               `json:"rounds"`
	VsBest *stats.Comparison `json:"vs_best,omitempty"` // against the size with the best estimate; nil for that one
	// Within: shown within the margin of every size not shown worse.
	Within bool `json:"within,omitempty"`
}

// poolSize sizes pm.max_children from the knee, capped by memory (shared memory plus children x peak private
// memory per worker), before any knob: the CPU knobs' arms run at that size (sizeFromSweep). poolRace then raises
// it to meet a latency goal and races the pick against its neighbours (the knee of a few short trials is a noisy
// pick).
func (t *tuner) poolSize() error {
	ps, cpuConc, err := sizeFromSweep(t.sat, sweepMemoryOf(t.log.trials), t.o, t.cpuConc)
	t.pool = ps // as far as it got, an error's too
	if err != nil {
		return err
	}
	if cpuConc != t.cpuConc {
		t.cpuConc, t.plan.CPUConcurrency = cpuConc, cpuConc
	}
	t.best.MaxChildren = ps.Chosen
	if t.stacks != nil && ps.PerWorkerBytes > 0 {
		t.stacks.Limit(t.o.Memory, func(c knob.Config) int64 { return ps.SharedBytes + int64(c.MaxChildren)*ps.PerWorkerBytes })
	}
	return nil
}

// sweepMemory is a worker's memory as the sweep's trials saw it at their largest: private memory's high-water,
// the shared part (counted once for the pool) and PHP's own peak for a request.
type sweepMemory struct {
	peakUSS, shared, peakRequest int64
}

// sweepMemoryOf is the saturation sweep's trials' sweepMemory.
func sweepMemoryOf(trials []TrialRecord) sweepMemory {
	var m sweepMemory
	for _, tr := range trials {
		if tr.Phase == "saturation" {
			m.peakUSS = max(m.peakUSS, tr.WorkerUSS)
			m.shared = max(m.shared, tr.WorkerShared)
			if tr.FPM != nil {
				m.peakRequest = max(m.peakRequest, tr.FPM.PeakRequestMemory)
			}
		}
	}
	return m
}

// sizeFromSweep is the pool's size before any race: the sweep's knee, at most the workers o.Memory holds (the
// shared part once, each worker at the larger of its private high-water and PHP's peak for a request) and
// below the concurrency the OOM killer struck at; a pinned size is the starting configuration's. cpuConc, the
// CPU trials' load, comes back capped by the memory too: their pools hold a worker a connection. A --memory
// that holds no worker is a usage error, returned with the size as far as it got.
func sizeFromSweep(sat *Saturation, mem sweepMemory, o Options, cpuConc int) (*PoolSize, int, error) {
	ps := &PoolSize{Knee: sat.Knee, Memory: o.Memory, PeakUSSBytes: mem.peakUSS, SharedBytes: mem.shared,
		PeakRequestBytes: mem.peakRequest, MemoryFrom: o.MemoryFrom, OtherPools: o.OtherPools}
	n := max(ps.Knee, 1)
	ps.PerWorkerBytes = max(ps.PeakUSSBytes, ps.PeakRequestBytes)
	if o.Memory > 0 && ps.PerWorkerBytes > 0 {
		ps.MemoryLimit = int((o.Memory - ps.SharedBytes) / ps.PerWorkerBytes)
		if ps.MemoryLimit < 1 {
			return ps, cpuConc, exitcode.UsageErrorf("--memory %d MiB does not hold one worker (%d MiB private at peak, %d MiB shared)",
				o.Memory>>20, ps.PerWorkerBytes>>20, ps.SharedBytes>>20)
		}
		if n > ps.MemoryLimit {
			n = ps.MemoryLimit
			ps.Note = "memory limits the pool below the CPU knee"
		}
		cpuConc = min(cpuConc, ps.MemoryLimit)
	}
	if sat.OOM > 0 {
		// The OOM killer struck at sat.OOM connections: no pool that large, whatever the figures said.
		below := 1
		for _, p := range sat.Points {
			if p.Concurrency < sat.OOM {
				below = max(below, p.Concurrency)
			}
		}
		if ps.MemoryLimit == 0 || below < ps.MemoryLimit {
			ps.MemoryLimit = below
		}
		n = min(n, below)
		ps.Note = fmt.Sprintf("the OOM killer struck at %d connections in the sweep: at most %d children", sat.OOM, below)
	}
	ps.Initial, ps.Chosen = n, n
	if _, pinned := o.Pins[knob.MaxChildren().Name]; pinned {
		ps.Chosen, ps.Note, ps.State = o.Base.MaxChildren, pinnedWords, StatePinned
	}
	return ps, cpuConc, nil
}

// NotRemeasured is the pool size's note when the budget left no time to race it against its neighbours.
const NotRemeasured = "not re-measured: the budget ran out"

// poolRace raises the pool to meet the latency goal, when there is one, and races its size against its
// neighbours (unless pinned).
func (t *tuner) poolRace(ctx context.Context) error {
	ps := t.pool
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

// loadThePool sets the load of the comparisons after the sizes' race to the pool it decided, full: the knee of
// a few short sweep trials moved from 2 to 8 between two runs of the demo, and every goodput race and the final
// loaded it; a decided size is a measurement of its own, and the pool a server would run.
func (t *tuner) loadThePool(size int) {
	if c := max(size, 2); c != t.conc {
		t.plan.ConcurrencyNote = fmt.Sprintf("%d connections (the knee's) until the pool's size was decided, then %d (its size)", t.conc, c)
		t.conc = c
		t.plan.Concurrency, t.facts.Concurrency = c, c
	}
}

// sizePool decides pm.max_children: the smallest size shown within the minimum effect of the best of the sizes
// raced (experiment.Smallest), within memory and not below floor, all under one load that fills the largest
// (a smaller pool queues the rest in its backlog, as it would in production). Not the best: on a flat curve the
// best of a few noisy sizes is a different one each run (the demo gave 4 in one run and 8 in the next); the
// smallest within the margin of whichever is best is the same size twice, or one inside the other run's range.
// Its row comes after the CPU knobs' (cpuFirst).
func (t *tuner) sizePool(ctx context.Context, limit, floor int) error {
	k := knob.MaxChildren()
	sizes := poolCandidates(t.sat, t.best.MaxChildren, limit, floor, t.o.poolMargin())
	if len(sizes) < 2 {
		row := KnobRow{Name: k.Name, Value: k.Get(t.best), From: k.Get(t.o.Base), Note: noOtherSize, State: StateNoAlternative}
		if len(sizes) == 1 {
			t.best.MaxChildren = sizes[0]
			row.Value = k.Get(t.best)
			row.Note = "the only size the sweep, memory and the latency goal leave"
		}
		if ps := t.pool; ps != nil {
			ps.Note = row.Note
		}
		t.log.addKnob(row)
		t.release(k.Name)
		return nil
	}
	_, later := cpuFirst(t.o.Knobs)
	spec := t.specOf(k)
	spec.Steady = true // static pools: a dynamic one churns between interleaved trials (steadyPool)
	nArms := len(sizes)
	allow, least := t.allowance(k.Name, nArms, nArms, spec, names(later)), t.d.cost(spec, nArms, nArms)
	t.noteTurn(k.Name, allow)
	if why := t.sizesNote(allow, least, nArms, spec); why != "" {
		t.keepStartingSize(limit, floor, notRacedWords, NotRaced, why)
		return nil
	}
	allow = t.atTurnAllow(k.Name, allow, least)
	if allow < least {
		if t.left()-t.finalLeast() < least {
			// The starting size, as where the race could not decide: a 3-minute demo's files set the knee's 4
			// in place of Debian's 5, "not compared" (2026-11-29, run q).
			t.keepStartingSize(limit, floor, notRemeasured, NotRemeasured,
				"the budget ran out ("+least.Round(time.Second).String()+" would have been needed at the least)")
			return nil
		}
		allow = least
	}
	t.release(k.Name)
	t.budget.Plan(experiment.Pairs(experiment.Smallest, nArms))
	return t.raceSizes(ctx, sizes, spec, allow, t.stretch(k.Name, names(later)))
}

// StateOf is how the size was come by where no race chose it (PoolSize.State); a result.json written before
// pool sizes carried a state has it from the note, read here and only here.
func (ps *PoolSize) StateOf() RowState {
	switch {
	case ps.State != "":
		return ps.State
	case ps.Note == pinnedWords:
		return StatePinned
	case ps.Note == NotRemeasured || ps.Note == NotRaced:
		return StateNotRaced
	}
	return ""
}

// NotRaced is the pool size's note when its race was deferred for good: the budget could not decide it.
const NotRaced = "not raced: the budget could not decide it"

// keepStartingSize is the pool size where its race could not decide or run: the starting configuration's size, as
// an open race keeps it (sizesDone), where memory and the latency goal allow it; else the knee's. Its row begins
// with words, why after them; note is the pool's.
func (t *tuner) keepStartingSize(limit, floor int, words, note, why string) {
	k := knob.MaxChildren()
	start := t.o.Base.MaxChildren
	if start >= max(floor, 1) && (limit <= 0 || start <= limit) {
		t.best.MaxChildren = start
		why += "; the starting size is kept"
	} else {
		why += "; the knee's size is kept (the starting one does not fit)"
	}
	if ps := t.pool; ps != nil {
		ps.Note, ps.State = note, StateNotRaced
	}
	t.log.addKnob(KnobRow{Name: k.Name, Value: k.Get(t.best), From: k.Get(t.o.Base)}.because(StateNotRaced, words, why))
	t.release(k.Name)
}

// raceSizes runs the sizes' experiment and records its row, its comparisons and the pool's range; undecided,
// it is kept for a second look (sizesLook).
func (t *tuner) raceSizes(ctx context.Context, sizes []int, spec arms.TrialSpec, allow, stretch time.Duration) error {
	rc, out, err := t.runSizes(ctx, t.best, sizes, spec, t.sizesGoOn(allow, stretch, len(sizes), spec.CostKind()))
	if out == nil {
		return err
	}
	pick, row, comps := t.sizesRow(sizes, rc.spec, out)
	rc.row, rc.comps = row, comps
	t.open = append(t.open, &openRace{rc: rc, e: t.log.addKnob(row, comps...), sizes: sizes})
	cfg := rc.cfgs[out.Winner].Clone()
	cfg.MaxChildren = pick
	t.sizesPicked(rc, cfg)
	return err
}

// runSizes makes the sizes' arms from from and runs their experiment until cont stops it; its arms are left
// running for sizesPicked, which holds the pick's stack first. A nil outcome: the arms could not be made.
func (t *tuner) runSizes(ctx context.Context, from knob.Config, sizes []int, spec arms.TrialSpec,
	cont func(experiment.Look) bool) (*raced, *experiment.Outcome, error) {
	k := knob.MaxChildren()
	var values []string
	for _, n := range sizes[1:] {
		values = append(values, strconv.Itoa(n))
	}
	from = from.Clone()
	from.MaxChildren = sizes[0]
	rc, err := t.d.arms(race{knob: k, from: from, values: values, spec: spec})
	if err != nil {
		return nil, nil, err
	}
	n := len(rc.arms)
	es := experiment.Spec{Name: k.Name, Arms: rc.arms, Mode: experiment.Smallest, HigherIsBetter: true, MinEffect: t.o.poolMargin(),
		Alpha: t.budget.Draw(experiment.Pairs(experiment.Smallest, n)), RunAlpha: t.budget.Total(), ParallelStart: true,
		Split: rc.spec.Split, Continue: cont,
		Progress: func(p experiment.Progress) {
			t.status("knob "+k.Name, fmt.Sprintf("round %d, %s=%s (%d sizes in the race)", p.Round, k.Name, p.Arm, p.Live))
		}}
	es, rc.offset = t.d.tuned(es, spec.Metric, spec.Phase)
	if rc.x, err = experiment.New(es); err != nil {
		stopAll(rc.arms)
		return nil, nil, err
	}
	out, err := rc.x.Run(ctx)
	return rc, out, t.sizesErr(ctx, rc, out, err)
}

// sizesErr is the run's error from a sizes' race that ended with err: none where memory ended it (the OOM
// killer met a size, not the run: the race ends undecided and the run goes on). Without an outcome, the arms
// are stopped.
func (t *tuner) sizesErr(ctx context.Context, rc *raced, out *experiment.Outcome, err error) error {
	rc.stopped = err
	if out == nil {
		stopAll(rc.arms)
		return err
	}
	if errors.Is(err, arms.ErrOOM) && ctx.Err() == nil {
		t.warn(fmt.Sprintf("the pool sizes' race ended after %s: %v", plural(out.Rounds, "round", "rounds"), err))
		return nil
	}
	return err
}

// sizesPicked sets the pick in the best configuration (held before the arms stop: the pick's warm stack, if it
// was raced, stays for what follows) and, decided, loads the comparisons after it with the pool it decided. The
// pool's Chosen is the pick's, a second look's too (one that chose 4 where the first race had chosen 8 left
// pool_size.chosen at 8 beside a row and files of 4).
func (t *tuner) sizesPicked(rc *raced, cfg knob.Config) {
	rc.best = cfg
	t.setBest(cfg)
	t.pool.Chosen = cfg.MaxChildren
	stopAll(rc.arms)
	if t.pool.Decided {
		t.loadThePool(cfg.MaxChildren)
	}
}

// sizesGoOn is the sizes' race's Continue: its allowance, as any race's, less the rounds that cannot decide it.
// Once the sizes shown worse are out, the first size left must be shown within the minimum effect of the rest,
// which a noisy app's rounds cannot do in a budget: on WordPress (a round varying 12%) the race dropped size 1 in
// 4 rounds and ran 12 more, 109 s of a 10-minute budget, to end where it began, the starting size kept; the final
// then had 13 rounds where 17 decided (2026-11-26, ra28). After sizesLeast rounds it stops when the rounds its
// estimate needs (experiment.Look.Needed) are more than its allowance still buys. It then ends open, as it would
// have when its time ran out: the pick the starting size, or the size not shown worse nearest it (openPick).
func (t *tuner) sizesGoOn(allow, stretch time.Duration, n int, kind string) func(experiment.Look) bool {
	began := t.clock.Now()
	cont := t.d.within(began, allow, stretch, n, kind)
	return func(l experiment.Look) bool {
		if l.Rounds >= sizesLeast && l.Needed > l.Rounds {
			round := time.Duration(l.Live) * t.costs.trial(kind)
			if began.Add(allow).Sub(t.clock.Now()) < time.Duration(l.Needed-l.Rounds)*round {
				return false
			}
		}
		return cont(l)
	}
}

// sizesLeast is the rounds the sizes' race runs before its estimate of the rounds it needs can stop it: what the
// Versus races' hopeless comparisons wait (experiment's yieldAfter).
const sizesLeast = 4

// sizesDone records the sizes' race (sizesRow) and returns the size chosen.
func (t *tuner) sizesDone(sizes []int, spec arms.TrialSpec, out *experiment.Outcome) int {
	pick, row, comps := t.sizesRow(sizes, spec, out)
	t.log.addKnob(row, comps...)
	return pick
}

// sizesRow is what the sizes' race shows: the size chosen, the row (the pick against the best), each
// size's comparison with the best and the range of sizes that serve within the margin, shown or not yet excluded.
// Decided, the pick is the smallest size shown within the margin. Open, it is the starting configuration's size,
// or the size not shown worse nearest it (openPick): every other knob keeps its
// incumbent until something is shown better, and the race's own pick when open is a noisy estimate after a few
// rounds (six demo runs picked 8, 8, 32, 4, 4 and 8; every range held 5).
func (t *tuner) sizesRow(sizes []int, spec arms.TrialSpec, out *experiment.Outcome) (int, KnobRow, []Comparison) {
	k := knob.MaxChildren()
	var comps []Comparison
	ps := t.pool
	if ps == nil { // a simulation's race, with no poolSize before it
		ps = &PoolSize{}
		t.pool = ps
	}
	ps.Load, ps.Sizes = spec.Conc, nil
	for i, a := range out.Arms {
		ps.Sizes = append(ps.Sizes, SizeResult{Size: sizes[i], Status: a.Status, Note: a.Note, RPS: medianOf(a.Trials, rate),
			Rounds: len(a.Trials), VsBest: a.Vs})
	}
	// Decided: the pick is shown within the margin of every size left, though a smaller one may still be open
	// (experiment.NoteOpenBefore: a size a percent or two from the margin is open for hundreds of rounds).
	ps.Decided = out.Arms[out.Winner].Within
	for i := range ps.Sizes {
		ps.Sizes[i].Within = out.Arms[i].Within
	}
	ps.setRange()
	pick, picked := sizes[out.Winner], out.Winner
	if !ps.Decided {
		pick, picked = ps.openPick(t.o.Base.MaxChildren, pick)
	}
	best := strconv.Itoa(sizes[out.Best])
	for i, sr := range ps.Sizes {
		if sr.VsBest == nil {
			continue
		}
		a := out.Arms[i]
		comps = append(comps, Comparison{Knob: k.Name, A: best, B: strconv.Itoa(sr.Size),
			Config: "max_children=" + strconv.Itoa(sr.Size), Metric: spec.Metric, Stats: *sr.VsBest,
			ValueA: medianOf(out.Arms[out.Best].Trials, value), ValueB: medianOf(a.Trials, value), RPSA: medianOf(out.Arms[out.Best].Trials, rate),
			RPSB: sr.RPS, ErrorsA: out.Arms[out.Best].Errors, ErrorsB: a.Errors, Rounds: sr.Rounds, Status: sr.Status,
			Accepted: i == picked, Note: sr.Note})
	}
	row := KnobRow{Name: k.Name, Value: strconv.Itoa(pick), From: k.Get(t.o.Base), Metric: spec.Metric, Rounds: out.Rounds, State: StateRaced,
		Note: ps.rangeNote(t.o.poolMargin()), Verdict: stats.Inconclusive}
	if ps.Decided {
		row.Verdict = NonInferior
	} else {
		row.Note = ps.openNote(t.o.Base.MaxChildren) + "; " + row.Note
		row.Need = sizesNeed(out, t.costs.trial(spec.CostKind()))
	}
	if picked < 0 {
		// A size between the raced ones: nothing measured it, so the row has no change of its own.
		return pick, row, comps
	}
	// The row states the pick against the best; when the pick is the best, against the size nearest it.
	c, other := out.Arms[picked].Vs, best
	if c == nil {
		if j := nearestCompared(out, picked); j >= 0 {
			c, other = invert(out.Arms[j].Vs), strconv.Itoa(sizes[j])
		}
	}
	if c != nil {
		row.EffectPct, row.CILowPct, row.CIHighPct = 100*c.Estimate, 100*c.Lo, 100*c.Hi
		row.setVersus(k.Name, strconv.Itoa(pick), other)
	}
	return pick, row, comps
}

// sizesNeed is what would decide an open sizes' race (a row's Need): the rounds its answer needs (Outcome.Needed),
// else those the comparison of its first open size with the best needs, at a round of the sizes still in it; ""
// where none says. WordPress's said nothing where the next look's cost was "3m41s", size 2 lying at the margin's
// edge; then "about 5 rounds (6s more)", size 1's to be shown worse, where 2 within the margin of 4 needed many
// more (2026-11-28).
func sizesNeed(out *experiment.Outcome, trial time.Duration) string {
	live, first := 0, -1
	for i, a := range out.Arms {
		switch a.Status {
		case experiment.StatusOpen, experiment.StatusWinner, experiment.StatusWithin:
			live++
			if first < 0 && a.Status == experiment.StatusOpen && a.Vs != nil {
				first = i
			}
		}
	}
	round := time.Duration(max(live, 2)) * trial
	if out.Needed > 0 {
		return Need(out.Needed, out.Rounds, round)
	}
	if first < 0 {
		return ""
	}
	return Need(out.Arms[first].Vs.RoundsNeeded, out.Rounds, round)
}

// setRange sets the range of the sizes not shown worse than the best: the winner, the within and the open ones.
func (ps *PoolSize) setRange() {
	ps.RangeLo, ps.RangeHi = 0, 0
	for _, sr := range ps.Sizes {
		switch sr.Status {
		case experiment.StatusWinner, experiment.StatusWithin, experiment.StatusOpen:
			if ps.RangeLo == 0 {
				ps.RangeLo = sr.Size
			}
			ps.RangeHi = sr.Size
		}
	}
}

// openNote says why an open race's pick is what it is.
func (ps *PoolSize) openNote(start int) string {
	if ps.Kept {
		return "no size was shown better" // the row says the starting size is kept (undecided)
	}
	return fmt.Sprintf("the starting %d is neither a size not shown worse, nor between two, nor within a doubling above the "+
		"largest: the nearest of them", start)
}

// openPick is the size an open race recommends: the starting configuration's, kept when it is a size raced and
// not shown worse, or lies between two such sizes or within one doubling above the largest; else the size not
// shown worse nearest it by ratio (the larger of two as near); fallback when every size was shown worse. It marks
// the size it names, if raced, as the pick (winner) and returns its index among the sizes, or -1 for a size not
// raced.
func (ps *PoolSize) openPick(start, fallback int) (pick, index int) {
	pick = fallback
	near := -1
	// Near by ratio, as the sizes run up a ladder of doubles: from 8, 4 and 16 are as near.
	dist := func(i int) float64 { return math.Abs(math.Log(float64(ps.Sizes[i].Size) / float64(max(start, 1)))) }
	for i, sr := range ps.Sizes {
		if sr.live() && (near < 0 || dist(i) <= dist(near)) {
			near = i
		}
	}
	if near >= 0 {
		pick = ps.Sizes[near].Size
	}
	for i := 0; i+1 < len(ps.Sizes); i++ {
		lo, hi := ps.Sizes[i], ps.Sizes[i+1]
		if lo.Size < start && start < hi.Size && lo.live() && hi.live() {
			pick = start
		}
	}
	// Just above the largest size, itself not shown worse, within one step of the sizes' ladder of doubles: as
	// near as between two sizes, on the sweep's flat top past its peak (the sizes stop there). WordPress's race of
	// 1, 2 and 4 had moved Debian's 5 to 4 on nothing, and the final then raced that against Debian's defaults.
	if last := ps.Sizes[len(ps.Sizes)-1]; last.live() && last.Size < start && start <= 2*last.Size &&
		(ps.MemoryLimit <= 0 || start <= ps.MemoryLimit) {
		pick = start
	}
	ps.Kept = pick == start
	index = -1
	for i := range ps.Sizes {
		sr := &ps.Sizes[i]
		if sr.Status == experiment.StatusWinner {
			sr.Status, sr.Note = experiment.StatusOpen, ""
		}
		if sr.Size == pick {
			sr.Status, index = experiment.StatusWinner, i
			sr.Note = "the pick: not shown worse, and no size shown better"
		}
	}
	return pick, index
}

// live says the size was not shown worse: the pick, shown within the margin, or open.
func (sr SizeResult) live() bool {
	switch sr.Status {
	case experiment.StatusWinner, experiment.StatusWithin, experiment.StatusOpen:
		return true
	}
	return false
}

// nearestCompared is the arm nearest i (the next larger first) that was compared with the best, or -1.
func nearestCompared(out *experiment.Outcome, i int) int {
	for d := 1; d < len(out.Arms); d++ {
		for _, j := range []int{i + d, i - d} {
			if j >= 0 && j < len(out.Arms) && out.Arms[j].Vs != nil && out.Arms[j].Status != experiment.StatusError {
				return j
			}
		}
	}
	return -1
}

// rangeNote says what the sizes' race showed: the pick, the sizes within the margin and the ones still open.
func (ps *PoolSize) rangeNote(minEffect float64) string {
	var within, open, worse []string
	for _, sr := range ps.Sizes {
		switch {
		case sr.live() && sr.Within:
			within = append(within, strconv.Itoa(sr.Size))
		case sr.live():
			open = append(open, strconv.Itoa(sr.Size))
		case sr.Status == experiment.StatusDropped:
			worse = append(worse, strconv.Itoa(sr.Size))
		}
	}
	var parts []string
	if r := ps.RangeText(minEffect); r != "" {
		parts = append(parts, r)
	}
	if len(within) > 0 {
		parts = append(parts, "shown: "+strings.Join(within, ", "))
	}
	if len(open) > 0 {
		parts = append(parts, "not yet shown: "+strings.Join(open, ", "))
	}
	if len(worse) > 0 {
		parts = append(parts, "worse by more: "+strings.Join(worse, ", "))
	}
	return strings.Join(parts, "; ")
}

// maxSizes is the most pool sizes raced: each costs a trial a round.
const maxSizes = 5

// minSizes is how many sizes the race gets, when the sweep measured them, however early its peak.
const minSizes = 3

// poolCandidates are the pool sizes to race, smallest first: the sweep's concurrencies from the first that
// reached half the peak's throughput up to the first within minEffect of the peak (a pool of n under a load that
// fills it queues what it cannot serve, so it serves at least what n connections did on the sweep's large pool:
// sizes below half the peak would only be dropped, and sizes past the top's first point only be shown within the
// margin too), within memory (the largest that fits when the top does not) and not below floor; of more than
// maxSizes, the smallest four and the largest. The demo's sweep rose by 2% from 16 connections to 32, its peak,
// and the pool sizes' race of 2 to 32 then ran 31 rounds of five trials for 4 to 32 within 4% of each other
// (2026-11-27): a size more is a trial more a round and more pairs to share the race's alpha.
// Without a sweep (simulations), the ladder's neighbours of cur.
func poolCandidates(sat *Saturation, cur, limit, floor int, minEffect float64) []int {
	var sizes []int
	fits := func(n int) bool { return (limit == 0 || n <= limit) && n >= floor }
	if sat == nil || len(sat.Points) == 0 {
		for _, n := range append(knob.Neighbours(cur), cur) {
			if fits(n) {
				sizes = append(sizes, n)
			}
		}
		slices.Sort(sizes)
		return slices.Compact(sizes)
	}
	peak := 0.0
	for _, p := range sat.Points {
		peak = max(peak, p.Median)
	}
	top := sat.Peak
	for _, p := range sat.Points {
		if p.Median >= peak/(1+minEffect) {
			top = min(top, p.Concurrency)
			break
		}
	}
	started := false
	for _, p := range sat.Points {
		if p.Median >= peak/2 {
			started = true
		}
		// Past the top only while fewer than three sizes are in: the sweep's points after it were within 5% of
		// it, and on a busy machine a flat curve can peak at 1 connection by chance (a pool of 1 on two CPUs).
		if p.Concurrency > top && len(sizes) >= minSizes {
			break
		}
		if started && fits(p.Concurrency) {
			sizes = append(sizes, p.Concurrency)
		}
	}
	if limit > 0 && sat.Peak > limit && limit >= floor && (len(sizes) == 0 || sizes[len(sizes)-1] < limit) {
		sizes = append(sizes, limit) // the largest the memory allows stands in for the peak
	}
	if floor > 0 && len(sizes) == 0 && fits(floor) {
		sizes = append(sizes, floor)
	}
	if len(sizes) > maxSizes {
		// The smallest and the largest: the question is the smallest size within the margin of the best, and the
		// best is about the largest. Keeping the largest five instead left the small sizes out whenever a noisy
		// sweep put its peak far out (a 3-minute demo raced 8 to 128 where a 10-minute one raced 4 to 64, so the
		// starting 5 lay inside one range and below the other). A curve still rising past the fourth size gets
		// the largest, not a size between.
		sizes = append(sizes[:maxSizes-1], sizes[len(sizes)-1])
	}
	return sizes
}

// RangeText says which sizes serve within the margin of the best: once none of them is open, for they are shown;
// before, as the sizes not yet ruled out. Empty without a race.
func (ps *PoolSize) RangeText(minEffect float64) string {
	margin := fmt.Sprintf("%.0f%%", 100*minEffect)
	open := false
	for _, sr := range ps.Sizes {
		open = open || sr.live() && !sr.Within
	}
	switch {
	case ps.RangeLo == 0:
		return ""
	case open && ps.RangeLo == ps.RangeHi:
		return fmt.Sprintf("size %d not shown worse than the best by more than %s", ps.RangeLo, margin)
	case open:
		return fmt.Sprintf("sizes %d to %d not shown worse than the best by more than %s", ps.RangeLo, ps.RangeHi, margin)
	case ps.RangeLo == ps.RangeHi:
		return fmt.Sprintf("only size %d serves within %s of the best", ps.RangeLo, margin)
	}
	return fmt.Sprintf("sizes %d to %d serve within %s of the best", ps.RangeLo, ps.RangeHi, margin)
}
