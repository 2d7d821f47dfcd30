package tune

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/arms"
	"github.com/phptune/phptune/internal/experiment"
	"github.com/phptune/phptune/internal/knob"
)

// cpuFirst splits the knobs, each part in its order: those decided on CPU per request (opcache, the JIT, the
// PHP binary...) come before the pool size's race, then the server, the rest after it. The first are the most
// telling and the cheapest to race (a static twin starts in under a second), and what they change does not depend
// on the pool's exact size; the pool's race and the rest are measured on goodput, whose stacks take seconds to
// settle. The server comes before the pool's race, each runtime at the starting size: after it, a runtime adopted
// changed what the sizes had run, and their race started again in its second look (the 10-minute demo, apache
// with mod_php adopted in four runs of four, lost 16 rounds of five sizes so, 2026-11-27).
func cpuFirst(ks []knob.Knob) (first, rest []knob.Knob) {
	var server []knob.Knob
	for _, k := range ks {
		switch {
		case metricOf(k) == MetricCPU:
			first = append(first, k)
		case k.Name == knob.ServerName:
			server = append(server, k)
		default:
			rest = append(rest, k)
		}
	}
	return append(first, server...), rest
}

func names(ks []knob.Knob) []string {
	var out []string
	for _, k := range ks {
		out = append(out, k.Name)
	}
	return out
}

// decideKnobs races each knob's values against the best so far, in order; the winner becomes the best. after
// are the races planned once these are done, which the time is shared with.
func (t *tuner) decideKnobs(ctx context.Context, ks []knob.Knob, after []string) error {
	for i, k := range ks {
		row, ok := t.notRaced(k)
		if ok {
			t.log.addKnob(row)
			t.release(k.Name)
			continue
		}
		values := t.candidates(k, t.best)
		spec := t.specOf(k)
		nArms := len(values) + 1
		cold := planned{arms: nArms, spec: spec}.coldArms()
		if !spec.Twin() && !t.src.Warm(t.best) {
			cold++
		}
		later := append(names(ks[i+1:]), after...)
		allow := t.allowance(k.Name, nArms, cold, spec, later)
		least := t.d.cost(spec, nArms, cold)
		t.noteTurn(k.Name, allow)
		if why := t.atTurnNote(k.Name, allow, least, nArms, cold, spec); why != "" {
			row := KnobRow{Name: k.Name, Value: k.Get(t.best), From: k.Get(t.o.Base)}
			t.log.addKnob(row.because(StateNotRaced, notRacedWords, why))
			t.release(k.Name)
			continue
		}
		allow = t.atTurnAllow(k.Name, allow, least)
		if allow < least {
			if t.left()-t.finalLeast() < least {
				t.log.addKnob(KnobRow{Name: k.Name, Value: k.Get(t.best), From: k.Get(t.o.Base)}.because(StateNotTried,
					notTriedWords, "the budget ran out ("+least.Round(time.Second).String()+" would have been needed at the least)"))
				t.release(k.Name)
				continue
			}
			allow = least
		}
		t.release(k.Name)
		t.budget.Plan(experiment.Pairs(experiment.Race, nArms))
		if k.Name == knob.ServerName {
			var err error
			if k, spec, err = t.sizeRuntimes(ctx, k, spec, values); err != nil {
				return err
			}
		}
		r, err := t.d.race(ctx, race{knob: k, from: t.best, values: values, allowance: allow, stretch: t.stretch(k.Name, later),
			spec: spec})
		if r != nil {
			t.raceDone(r)
			t.runtimesDone(r)
		}
		if r != nil && errors.Is(err, arms.ErrOOM) && ctx.Err() == nil {
			continue // the incumbent's trials kept meeting the OOM killer: this race ends undecided, not the run
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// notRaced is the row of a knob that gets no race (pinned, skipped, nothing to try, all screened out), and
// whether it is one.
func (t *tuner) notRaced(k knob.Knob) (KnobRow, bool) {
	row := KnobRow{Name: k.Name, Value: k.Get(t.best), From: k.Get(t.o.Base)}
	if _, pinned := t.o.Pins[k.Name]; pinned {
		row.State, row.Note = StatePinned, pinnedWords
		return row, true
	}
	if r, ok := t.decided[k.Name]; ok {
		return r, true
	}
	why := t.skip[k.Name]
	if why == "" && k.Skip != nil {
		why = k.Skip(t.facts, t.best) // an earlier decision may have made it moot
	}
	if why != "" {
		return row.because(StateNotTried, notTriedWords, why), true
	}
	if len(t.candidates(k, t.best)) > 0 {
		return row, false
	}
	if notes := t.screenNotes(k.Name); len(notes) > 0 {
		// Every candidate was screened out: the counts say there is nothing to gain, and no time was measured.
		row.Metric, row.Verdict = MetricWork, Screened
		return row.because(StateScreened, "", strings.Join(notes, " ")), true
	}
	row.State, row.Note = StateNoAlternative, noAlternative
	return row, true
}

// specOf is what k's race measures: CPU knobs on CPU trials, pool knobs on goodput in their own pools, the
// other goodput knobs on steady twins; a Tail knob's goodput race guards the p99; goodput races run split rounds
// where the run does (Options.Split) and they are fair (Splits).
func (t *tuner) specOf(k knob.Knob) arms.TrialSpec {
	metric := metricOf(k)
	goodput := metric == MetricGoodput
	return arms.TrialSpec{Phase: knobPhase(k.Name), Metric: metric, Conc: t.concOf(metric), Steady: goodput && !k.Pool,
		Tail: goodput && k.Tail, Split: goodput && t.o.Split && Splits(k.Name)}
}

// concOf is the load of metric's trials: the knee's for goodput, enough to keep the CPUs busy for CPU trials.
func (t *tuner) concOf(metric string) int {
	if metric == MetricCPU && t.cpuConc > 0 {
		return t.cpuConc
	}
	return t.conc
}

// release takes a knob's planned race out of the error budget's plan.
func (t *tuner) release(name string) {
	if p, ok := t.plans[name]; ok {
		t.budget.Release(experiment.Pairs(experiment.Race, p.arms))
		delete(t.plans, name)
	}
}

// screenNotes are the screen's words on the candidates of a knob it took out.
func (t *tuner) screenNotes(name string) []string {
	var out []string
	for _, sc := range t.log.screens {
		if sc.Knob == name && !sc.Survived {
			out = append(out, sc.Note)
		}
	}
	return out
}

// Order is the order tune decides ks in (decideAll): the knobs decided on CPU per request, the server, the pool
// size, then the rest.
func Order(ks []knob.Knob) []string {
	var raced []knob.Knob
	for _, k := range ks {
		if !k.Soak { // decided by the soak, not raced
			raced = append(raced, k)
		}
	}
	cpu, rest := cpuFirst(raced)
	return append(append(names(cpu), knob.MaxChildren().Name), names(rest)...)
}

// knobPhase is the phase a knob's race records its trials and stacks under.
func knobPhase(name string) string { return "knob " + name }
