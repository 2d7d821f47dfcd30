package clients

import (
	"context"
	"slices"

	"github.com/phptune/phptune/internal/experiment"
	"github.com/phptune/phptune/internal/stats"
)

// sweep races each model's candidates, in ascending concurrency (the smallest the incumbent: a larger one that
// is no better brings nothing), for at most SweepIterations rounds, and picks per model the race's winner or,
// when the rounds ran out first, the best median among the candidates still in. A model with one candidate is
// its pick, unmeasured.
func (r *runner) sweep(ctx context.Context, srv *Server, cands []Arm) (map[string]Arm, error) {
	byModel := map[string][]Arm{}
	for _, a := range cands {
		byModel[a.Model] = append(byModel[a.Model], a)
	}
	picks := map[string]Arm{}
	for _, m := range Models {
		list := byModel[m]
		slices.SortStableFunc(list, func(a, b Arm) int { return a.Concurrency() - b.Concurrency() })
		list = slices.Compact(list)
		if len(list) == 1 {
			picks[m] = list[0]
		}
		if len(list) < 2 {
			continue
		}
		out, ea, err := r.experiment(ctx, srv, plan{phase: "sweep", mode: experiment.Race, rounds: r.cfg.SweepIterations, revs: r.cfg.SweepRevs}, list)
		if out == nil {
			return picks, err
		}
		pick := pickOf(out, ea)
		for i, a := range ea {
			res := out.Arms[i]
			pt := SweepPoint{Arm: a.arm, Concurrency: a.arm.Concurrency(), Iterations: len(a.samples), Picked: i == pick}
			if res.Status == experiment.StatusError {
				pt.Error = res.Note
			} else if res.Status == experiment.StatusDropped {
				pt.Note = res.Note
			}
			if len(a.samples) > 0 {
				pt.OpsPerS = stats.Median(opsPerS(a.samples))
			}
			r.out.Sweeps = append(r.out.Sweeps, pt)
		}
		if pick >= 0 {
			picks[m] = ea[pick].arm
		}
		if err != nil {
			return picks, err
		}
	}
	return picks, nil
}

// neighbourRace races a sweep's pick (a noisy maximum) against the candidates next to it in its sweep list, in
// fresh rounds, and returns the model's pick and a row for each of the others. The race ends futile after
// neighboursFutile rounds in which no neighbour's estimate is a third of the minimum effect in its favour.
func (r *runner) neighbourRace(ctx context.Context, srv *Server, pick Arm) (Arm, []Row, error) {
	arms := append([]Arm{pick}, r.neighbours(pick)...)
	if len(arms) == 1 {
		return pick, nil, nil
	}
	out, ea, err := r.experiment(ctx, srv, plan{phase: "neighbours", mode: experiment.Race, rounds: r.cfg.Iterations,
		futileAfter: neighboursFutile, revs: r.cfg.Revs}, arms)
	if out == nil {
		return pick, nil, err
	}
	// The engine's choice: the pick keeps its place unless a neighbour is shown faster (a race where no
	// neighbour shows promise ends early, futile).
	win := out.Winner
	if out.Arms[win].Status == experiment.StatusError {
		win = max(pickOf(out, ea), 0) // none left: the main run says why
	}
	var rows []Row
	for i, a := range ea {
		if i == win {
			continue
		}
		row := r.row(a)
		res := out.Arms[i]
		switch res.Status {
		case experiment.StatusError:
			row.Error = res.Note
			r.out.Errors = append(r.out.Errors, res.Note)
		case experiment.StatusDropped:
			row.Note = "not picked: " + res.Note
		default:
			row.Note = "not picked: not shown faster than " + ea[win].arm.Label() + ", which keeps its place"
		}
		rows = append(rows, row)
	}
	return ea[win].arm, rows, err
}

const neighboursFutile = 3

// pickOf is a sweep's choice: the one arm left when it decided, else the best median among the arms still in;
// -1 when none has a trial.
func pickOf(out *experiment.Outcome, ea []*engineArm) int {
	if out.Ended == experiment.EndDecided && out.Arms[out.Winner].Status == experiment.StatusWinner {
		return out.Winner
	}
	best, idx := 0.0, -1
	for i, a := range ea {
		st := out.Arms[i].Status
		if st == experiment.StatusError || st == experiment.StatusDropped || len(a.samples) == 0 {
			continue
		}
		if m := stats.Median(opsPerS(a.samples)); m > best {
			best, idx = m, i
		}
	}
	return idx
}

// main compares each arm with sync (arms[0]) in fresh interleaved rounds, all Iterations of them (phpbench's
// iterations; the races before it are what stops early), and returns a row per arm.
func (r *runner) main(ctx context.Context, srv *Server, arms []Arm) ([]Row, error) {
	if len(arms) == 1 {
		return r.alone(ctx, srv, arms[0])
	}
	out, ea, err := r.experiment(ctx, srv, plan{phase: "main", mode: experiment.Versus, rounds: r.cfg.Iterations,
		minRounds: r.cfg.Iterations, revs: r.cfg.Revs}, arms)
	if out == nil {
		return nil, err
	}
	rows := make([]Row, len(ea))
	for i, a := range ea {
		row, res := r.row(a), out.Arms[i]
		row.Best = true // the model's pick
		if res.Status == experiment.StatusError {
			row.Error = res.Note
			r.out.Errors = append(r.out.Errors, res.Note)
		}
		switch {
		case len(a.samples) == 0:
		case i == 0:
			row.Speedup = ptr(1)
			r.ceiling(row, a.samples)
		case res.Vs != nil && res.Vs.Verdict != stats.Error:
			c := res.Vs
			row.Speedup, row.Comparison = ptr(1+c.Estimate), c
			if c.N >= 2 {
				row.SpeedupLow, row.SpeedupHigh = ptr(1+c.Lo), ptr(1+c.Hi)
			}
		}
		rows[i] = row
	}
	return rows, err
}

// alone measures sync by itself (no other model asked for): its row and ceiling, no comparison.
func (r *runner) alone(ctx context.Context, srv *Server, a Arm) ([]Row, error) {
	ea := &engineArm{r: r, srv: srv, arm: a, phase: "main", revs: r.cfg.Revs, rounds: r.cfg.Iterations}
	err := ea.Start(ctx)
	for err == nil && len(ea.samples) < ea.rounds {
		_, err = ea.Trial(ctx)
	}
	row := r.row(ea)
	row.Best = true
	if len(ea.samples) > 0 {
		row.Speedup = ptr(1)
		r.ceiling(row, ea.samples)
	}
	if err != nil && ctx.Err() == nil {
		row.Error = err.Error()
		r.out.Errors = append(r.out.Errors, row.Error)
		err = nil
	}
	return []Row{row}, err
}

// row is an arm's own figures: ops/s (the median, with its distribution-free interval), CPU per op, retries.
func (r *runner) row(a *engineArm) Row {
	row := Row{Arm: a.arm, Concurrency: a.arm.Concurrency(), Available: true, Samples: a.samples, Iterations: len(a.samples)}
	x := opsPerS(a.samples)
	if len(x) == 0 {
		return row
	}
	row.OpsPerS = ptr(stats.Median(x))
	if lo, hi, ok := MedianCI(x); ok {
		row.CILow, row.CIHigh = ptr(lo), ptr(hi)
	}
	var ops, cpu, scpu float64
	for _, s := range a.samples {
		row.Retries += s.Retried
		ops += float64(s.Ops)
		cpu += s.CPUSeconds
		scpu += s.ServerCPU
	}
	row.ClientCPUPerOpUS = cpu / ops * 1e6
	row.ServerCPUPerOpUS = scpu / ops * 1e6
	return row
}

// plannedPairs is how many pairs of arms the run's experiments may compare, for the error budget's shares: per
// target and op, each sweep's race, each pick's race with its two neighbours, each model and phpredis row
// against sync.
func (c Config) plannedPairs() int {
	per := 0
	for _, m := range c.Models {
		var list []int
		switch m {
		case ModelSync:
			continue
		case ModelFibers:
			list = c.Fibers
		case ModelProcesses, ModelProcFibers:
			list = c.Procs
		case ModelPipeline:
			list = c.Depths
		}
		per += experiment.Pairs(experiment.Race, len(list)) + 1
		if c.Neighbours {
			per += experiment.Pairs(experiment.Race, min(3, len(list)))
		}
	}
	n := 0
	for _, t := range c.Targets {
		for _, op := range c.Ops[t] {
			n += per
			if t == Redis && c.Phpredis && op != "check" {
				n += 3 // phpredis's sync, processes and pipeline rows
			}
		}
	}
	return max(n, 1)
}

// alpha is the run's error budget.
func (c Config) alpha() float64 {
	if c.Alpha > 0 && c.Alpha < 1 {
		return c.Alpha
	}
	return stats.DefaultAlpha
}
