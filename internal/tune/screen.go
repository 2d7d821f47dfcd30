package tune

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/experiment"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/profile"
)

// Screener counts the work a configuration makes PHP do per request, each count on its own: system calls are
// counted only for candidates whose instructions did not already differ (profile.NewCounters makes one).
type Screener = profile.Counters

// UseScreener gives o its screener, profile's counters, counting with urls() as they are when it counts: after a
// URL file's login, with its session. It returns the program that is missing when there is no screener where
// screening would run (ForceScreen, or a Budget of ScreenBudget or more), else "".
func (o *Options) UseScreener(urls func() []load.MixItem) (missing string) {
	if o.Screen, missing = profile.NewCounters(o.Stack, urls, o.Request); o.Screen == nil && (o.ForceScreen || o.Budget >= ScreenBudget) {
		return missing
	}
	return ""
}

// Work is what a request costs PHP, counted rather than timed: repeatable, so equal counts mean a CPU-only
// knob has nothing to give.
type Work struct {
	InstructionsPerReq float64 `json:"instructions_per_req"`
	SyscallsPerReq     float64 `json:"syscalls_per_req"`
	// SyscallsCounted is false when the instructions alone decided: counting system calls takes a stack.
	SyscallsCounted bool   `json:"syscalls_counted"`
	Method          string `json:"method,omitempty"` // how it was counted
}

// Screen is one screened candidate of a CPU-only knob.
type Screen struct {
	Knob     string `json:"knob"`
	Value    string `json:"value"`
	From     string `json:"from"`
	Base     Work   `json:"base"`
	Cand     Work   `json:"candidate"`
	Survived bool   `json:"survived"` // the counts differ: timed trials decide
	Note     string `json:"note,omitempty"`
}

// screen counts the work per request of each CPU-only knob's candidates against the starting point; a
// candidate that changes neither instructions nor syscalls by half the minimum effect has nothing to give, and
// gets no timed trials. The counts are repeatable, so this is a measurement, not a gamble. It runs only where
// it pays: counting a candidate takes seconds of valgrind, and a candidate that changes nothing costs a race
// the rounds that show no difference at this run's noise; with no prior knowledge of which candidates change
// nothing, screening pays when that race would cost more than counting twice. At most a sixth of the budget.
func (t *tuner) screen(ctx context.Context) error {
	noop := t.noopRace()
	var base *Work
	var perCount time.Duration
	tol := max(t.o.MinEffect/2, 0.005)
	began := t.clock.Now()
	limit := began.Add(t.o.Budget / 6)
	defer func() { t.plan.ScreenWallS = t.clock.Now().Sub(began).Seconds() }()
	for _, k := range t.o.Knobs {
		if _, pinned := t.o.Pins[k.Name]; pinned || !k.CPUOnly {
			continue
		}
		if k.Skip != nil && k.Skip(t.facts, t.best) != "" {
			continue
		}
		for _, v := range k.Values(t.facts, t.best) {
			if v == k.Get(t.best) {
				continue
			}
			if base == nil {
				var note string
				var err error
				if base, note, err = t.countBase(ctx, noop, limit); err != nil || note != "" {
					t.plan.ScreenNote = note
					return err
				}
				perCount = t.clock.Now().Sub(began)
			}
			// Checked once the starting point's count says what a count takes, before the first candidate's:
			// WordPress's took a minute, and its first candidate another 72 s past the point where counting every
			// candidate could not fit (2026-11-26, ra20: 132 s of a 10-minute budget for one count of opcache off).
			if note := t.screenStops(noop, perCount, limit); note != "" {
				t.plan.ScreenNote = note
				return nil
			}
			cand := t.best.Clone()
			if err := k.Set(&cand, v); err != nil {
				return exitcode.UsageErrorf("knob %s=%s: %v", k.Name, v, err)
			}
			t.status("screen", fmt.Sprintf("%s=%s", k.Name, orUnset(v)))
			if err := t.screenOne(ctx, k, v, cand, base, tol, limit); err != nil {
				return err
			}
		}
	}
	if base != nil {
		t.plan.ScreenNote = fmt.Sprintf("a race that shows no difference would take about %s here; counting a candidate took %s",
			noop.Round(time.Second), perCount.Round(time.Second))
	}
	return nil
}

// countBase counts the starting point's work per request, and gives the count up ("" note otherwise) once it has
// run past what screenStops would stop at after it: longer than half a race that shows no difference, or than
// the budget's sixth shared by it and every candidate. WordPress's took 62 s where 20 s was the most that could
// pay (2026-11-26, ra24), and that minute was the final's.
func (t *tuner) countBase(ctx context.Context, noop time.Duration, limit time.Time) (*Work, string, error) {
	fit := limit.Sub(t.clock.Now()) / time.Duration(t.screenLeft()+1)
	most := min(noop/2, fit)
	t.status("screen", "counting the work of a request")
	cctx, cancel := context.WithTimeout(ctx, max(most, 0))
	defer cancel()
	n, err := t.o.Screen.Instructions(cctx, t.best)
	switch {
	case err == nil:
		return &Work{InstructionsPerReq: n, Method: t.o.Screen.Method}, "", nil
	case ctx.Err() != nil:
		return nil, "", ctx.Err()
	case cctx.Err() == nil:
		return nil, "", fmt.Errorf("screen %s: %w", t.best, err)
	case most < fit:
		return nil, fmt.Sprintf("stopped: counting a request's work took more than %s, and a race that shows no difference would take about %s here",
			most.Round(time.Second), noop.Round(time.Second)), nil
	}
	return nil, fmt.Sprintf("stopped: counting a request's work took more than %s, and counting every candidate would take more than a sixth of the budget",
		most.Round(time.Second)), nil
}

// screenStops says why the screen stops before its next count ("" when it goes on): a race that shows no
// difference costs less than counting twice, the count would end past limit, or counting every candidate left
// would, before any was counted.
func (t *tuner) screenStops(noop, perCount time.Duration, limit time.Time) string {
	switch {
	case noop < 2*perCount:
		return fmt.Sprintf("stopped: counting a candidate took %s, and a race that shows no difference would take about %s here",
			perCount.Round(time.Second), noop.Round(time.Second))
	case t.clock.Now().Add(perCount).After(limit):
		return fmt.Sprintf("stopped at a sixth of the budget (counting a candidate took %s)", perCount.Round(time.Second))
	case len(t.log.screens) == 0 && t.clock.Now().Add(time.Duration(t.screenLeft())*perCount).After(limit):
		return fmt.Sprintf("stopped: counting every candidate (%s each) would take more than a sixth of the budget", perCount.Round(time.Second))
	}
	return ""
}

// screenLeft is how many CPU-only candidates are still to count.
func (t *tuner) screenLeft() int {
	n := 0
	for _, k := range t.o.Knobs {
		if _, pinned := t.o.Pins[k.Name]; pinned || !k.CPUOnly || (k.Skip != nil && k.Skip(t.facts, t.best) != "") {
			continue
		}
		for _, v := range k.Values(t.facts, t.best) {
			if v != k.Get(t.best) {
				n++
			}
		}
	}
	return n - len(t.log.screens)
}

// noopRace estimates what racing a candidate that changes nothing would take: the rounds until the interval
// fits inside the minimum effect, at the noise the saturation sweep saw, at a typical share of the budget.
func (t *tuner) noopRace() time.Duration {
	sd := math.Sqrt2 * t.sat.NoiseSD
	if sd <= 0 || t.o.MinEffect <= 0 {
		return time.Hour
	}
	s := experiment.NewSequence(0)
	s.Add(-sd / math.Sqrt2)
	s.Add(sd / math.Sqrt2)
	rounds := s.RoundsFor(math.Log1p(t.o.MinEffect), t.o.Alpha/20, 1000)
	return time.Duration(rounds*2) * t.costs.trial(MetricCPU)
}

// screenOne counts one candidate and records whether it survives.
func (t *tuner) screenOne(ctx context.Context, k knob.Knob, v string, cand knob.Config, base *Work, tol float64,
	limit time.Time) error {
	// A count is bounded by the screen's share of the budget too: one that runs past it is given up, the
	// candidate left to the timed trials (unbounded, WordPress's candidates took 546 s of a 20-minute run's
	// 200 s share once PHP's time limits were lifted under callgrind).
	cctx, cancel := context.WithTimeout(ctx, max(limit.Sub(t.clock.Now()), 0))
	defer cancel()
	w, err := t.screenCount(cctx, cand, base, tol)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		note := "not screened: " + err.Error()
		if cctx.Err() != nil {
			note = "not screened: its count ran past the screen's sixth of the budget"
		}
		// A candidate the screen cannot run is left to the timed trials, which report its failure.
		t.log.screens = append(t.log.screens, Screen{Knob: k.Name, Value: v, From: k.Get(t.best), Base: *base,
			Survived: true, Note: note})
		return nil
	}
	sc := Screen{Knob: k.Name, Value: v, From: k.Get(t.best), Base: *base, Cand: *w}
	di := relDiff(w.InstructionsPerReq, base.InstructionsPerReq)
	if !w.SyscallsCounted {
		sc.Survived = true
		sc.Note = fmt.Sprintf("%s=%s: instructions/request %+.1f%% (system calls not counted: the instructions decide)",
			k.Name, orUnset(v), 100*di)
	} else {
		ds := relDiff(w.SyscallsPerReq, base.SyscallsPerReq)
		sc.Survived = math.Abs(di) >= tol || (math.Abs(ds) >= tol && math.Abs(w.SyscallsPerReq-base.SyscallsPerReq) >= 0.5)
		sc.Note = fmt.Sprintf("%s=%s: instructions/request %+.1f%%, syscalls/request %.1f -> %.1f", k.Name, orUnset(v),
			100*di, base.SyscallsPerReq, w.SyscallsPerReq)
	}
	if !sc.Survived {
		sc.Note = "screened out (" + sc.Note + "): no timed trial"
		if t.screens[k.Name] == nil {
			t.screens[k.Name] = map[string]bool{}
		}
		t.screens[k.Name][v] = true
		t.plan.ScreenedOut++
	}
	t.log.screens = append(t.log.screens, sc)
	return nil
}

// screenCount counts cand's instructions and, only when they are within tol of base's, its system calls (and
// base's, once): a candidate whose instructions differ goes to timed trials whatever its system calls, and
// counting them takes a php-fpm stack under strace, about as long as the instructions.
func (t *tuner) screenCount(ctx context.Context, cand knob.Config, base *Work, tol float64) (*Work, error) {
	n, err := t.o.Screen.Instructions(ctx, cand)
	if err != nil {
		return nil, err
	}
	w := &Work{InstructionsPerReq: n, Method: t.o.Screen.Method}
	if math.Abs(relDiff(n, base.InstructionsPerReq)) >= tol {
		return w, nil
	}
	if !base.SyscallsCounted {
		b, err := t.o.Screen.Syscalls(ctx, t.best)
		if err != nil {
			return nil, fmt.Errorf("count system calls of %s: %w", t.best, err)
		}
		base.SyscallsPerReq, base.SyscallsCounted = b, true
	}
	if w.SyscallsPerReq, err = t.o.Screen.Syscalls(ctx, cand); err != nil {
		return nil, err
	}
	w.SyscallsCounted = true
	return w, nil
}
