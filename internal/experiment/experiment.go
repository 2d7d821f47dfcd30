package experiment

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/phptune/phptune/internal/stats"
)

// Observation is what one trial of an arm measured.
type Observation struct {
	// Value is the figure decided on (requests/s served, requests per CPU-second, seconds per op...); it must
	// be positive: comparisons work on log ratios.
	Value    float64 `json:"value"`
	Requests int64   `json:"requests,omitempty"` // requests that succeeded
	Errors   int64   `json:"errors,omitempty"`   // requests that failed
	// Rate is requests served a second of wall time, for the record when Value is another figure.
	Rate float64 `json:"rate,omitempty"`
	// Step is Value's resolution, relative: the step it moves in (1/count for a count of requests in a window, a
	// timer's tick over the time it read); 0 when finer than anything that matters. A decision's spread is never
	// taken below what the steps imply, and its interval allows for what they may hide (quantize.go).
	Step float64 `json:"step,omitempty"`
	// Second is a second figure of the same trial, positive, when the Spec decides on one (Spec.Second);
	// SecondStep is its resolution.
	Second     float64 `json:"second,omitempty"`
	SecondStep float64 `json:"second_step,omitempty"`
	// P99 is the trial's 99th percentile of latency (any unit, the same in every trial) where it measured one:
	// for the record, and for a caller whose second figure it is.
	P99 float64 `json:"p99,omitempty"`
	// Capacity is requests per CPU-second of the arm's servers where the trial read it: what a split round
	// (Spec.Split) reads the machine's speed from.
	Capacity float64 `json:"capacity,omitempty"`
	// Stack says which of the arm's stacks ran the trial (any number, the same for the same stack), for
	// Spec.StackSD: an arm whose trials all say 0 ran on one stack.
	Stack int `json:"stack,omitempty"`
}

// Figure is a second figure an experiment judges (Spec.Second).
type Figure struct {
	Name           string
	HigherIsBetter bool
	// StackSD is Spec.StackSD for this figure.
	StackSD float64
	// LeadSD is the spread of a lead that lasts the whole run (log scale; 0: none): one arm's figure ahead of the
	// other's in every round alike, stacks moving or not, which more rounds cannot average away (lead.go).
	LeadSD float64
	// Sparse lets a round's trials leave the figure out (Observation.Second 0 in every trial of the round): the
	// round counts for Value alone, and the figure is judged on the rounds that gave it (a caller that measures
	// it in some rounds only, to buy more rounds of Value: gate's latency). A round where some trials give it and
	// others do not is left out of it as well.
	Sparse bool
	// Guard, in a race, makes the figure a condition rather than a goal: a challenger shown worse on it than
	// Arms[0] leaves the race whatever its Value, and one whose estimate on it leans against it by MinEffect or
	// more, undecided, does not take Arms[0]'s place while rounds remain (guard.go). Elsewhere it is judged as
	// any second figure.
	Guard bool
}

// Arm is one configuration under test.
type Arm interface {
	Name() string
	// Start makes the arm ready for trials (a warm stack); an arm already running may return at once.
	Start(ctx context.Context) error
	// Trial runs one measured trial. An error takes the arm out of the experiment with the outcome error.
	Trial(ctx context.Context) (Observation, error)
	// Stop releases the arm. The engine stops each arm it takes out before the end; the arms still in at the
	// end are the caller's to keep or stop.
	Stop()
}

// Mode is what an experiment decides.
type Mode int

const (
	// Race finds the best arm: every arm runs in the same rounds, an arm shown worse than another (or, for a
	// challenger, shown within the minimum effect of the incumbent, Arms[0]) is dropped, and the race ends when
	// one arm is left. The incumbent keeps its place unless another arm is shown better (irace, F-race).
	Race Mode = iota
	// Versus compares every arm with Arms[0], each until its comparison is decided.
	Versus
	// Smallest finds the first arm, in the order given (the cheapest first), shown within the minimum effect of
	// the best: not worse than any other by more than MinEffect (see smallest.go). Arms shown worse than another
	// are dropped; Outcome.Best is the arm with the best estimate, and each arm's Vs is against it.
	Smallest
)

// Spec is one experiment.
type Spec struct {
	Name string
	Arms []Arm
	Mode Mode
	// HigherIsBetter says which way Value points.
	HigherIsBetter bool
	// StackSD is the spread of a stack's own offset on Value (log scale; measured with replicated stacks): each
	// pair's interval allows for the offsets of the stacks its rounds ran on (Observation.Stack), so that an
	// offset that lasts a stack's life is not read as the configuration's effect (offsets.go). 0: none.
	StackSD float64
	// Second, when set, is a second figure every trial gives (Observation.Second), judged on the same rounds by
	// the same rule: each arm's comparison with Arms[0] on it is ArmResult.Vs2. The pair's alpha is split evenly
	// between the two figures, so one error budget covers both. Versus decides an arm once both of its
	// comparisons are decided; a race drops and picks on Value and states the second beside it, unless the
	// second is a guard (Figure.Guard).
	Second *Figure
	// MinEffect is the smallest relative change that counts as better or worse (0.01 = 1%); an interval inside
	// +-MinEffect shows no difference.
	MinEffect float64
	// Alpha is this experiment's share of the run's error budget; it is split evenly over the pairs of arms
	// the experiment may compare (all pairs in a race, each arm with Arms[0] in Versus).
	Alpha float64
	// RunAlpha is the run's whole error budget, against which adjusted p-values are stated (0: 0.05).
	RunAlpha float64
	// Mixture is the confidence sequences' mixture parameter (0: DefaultMixture).
	Mixture float64
	// MaxRounds caps the rounds (0: no cap but Continue's).
	MaxRounds int
	// MinRounds runs every arm at least this many rounds (unless it fails) before anything is decided: figures
	// reported beside the verdicts (a median's interval) need them. Looks deferred are harmless to a confidence
	// sequence, which is valid at any stopping time.
	MinRounds int
	// FutileAfter, in a race, ends it after at least this many rounds once no challenger's estimate against the
	// incumbent reaches a third of MinEffect in its favour: a knob that shows nothing after a fair share of
	// rounds leaves the rest of its time to others. Its comparisons end inconclusive (say what would decide
	// them); no verdict changes, so error rates do not either. 0: never.
	FutileAfter int
	// Continue is asked before each round with where the experiment stands; false ends it, undecided
	// comparisons inconclusive (the budget ran out). Nil: always.
	Continue func(Look) bool
	// RoundsLeft, in Versus, is how many more rounds of live arms the time left buys (nil: no bound). After 4
	// rounds, a comparison that would need more rounds than that even with it out leaves its rounds
	// (StatusYielded) to an earlier arm's that can still be decided (the arms come in the order their
	// comparisons matter), and comes back once the others are decided.
	RoundsLeft func(live int) int
	// Hold, in Versus, keeps arm j in the rounds once its comparisons are decided, while it says so (nil:
	// never), given Arms[0]'s and arm j's results so far: for a caller that judges another figure of the same
	// rounds (Paired) and wants more of them. Where to stop is a stopping rule: it changes no error rate.
	Hold func(j int, ref, arm ArmResult) bool
	// Progress, when set, hears of each trial before it runs.
	Progress func(Progress)
	// ParallelStart starts the arms at the same time: their Start methods must be safe for that.
	ParallelStart bool
	// Duet runs each round's trials at the same time, each arm loaded by its own connections, so that the
	// machine's noise (a neighbour, a frequency change) falls on all of them alike and cancels in their ratios
	// (Bulej et al., "Duet Benchmarking", ICPE 2020). Fair only where an arm's figure does not depend on how much
	// of the machine it gets (a request's CPU cost, not throughput). Trial methods must be safe for it; an arm
	// that is a Preparer prepares before any trial of the round starts.
	Duet bool
	// Split runs each round's trials twice: in turn, then all at once (a duet), and reads an arm's figure of the
	// round as the product of what each measures fairly: Value / Capacity of its trial in turn (the share of the
	// machine the arm got: goodput over capacity is the servers' CPU-seconds a second) times Capacity of its duet
	// trial (where the machine's noise falls on every arm alike). Every trial must give Capacity. For
	// throughput, whose duet is unfair (an arm that takes more of the machine makes its rival look worse), while
	// its alternating rounds carry the machine's noise: on the demo's pools a split round of pm or listen varied
	// about 0.6 times as much as an alternating one (docs/engine.md, "Split rounds", which says where it is not
	// fair). The round's second figure is its trial in turn's. Arms prepare (Preparer) before the trials in
	// turn, not between the two passes: an arm's two trials of a round run on one stack.
	Split bool
}

// Preparer is an arm with work to do before a round that must not overlap any arm's trial, such as moving to a
// fresh stack (a start beside a trial skews it). In a duet round the engine calls Prepare on every arm before
// the trials start; an error counts as the arm's trial failing.
type Preparer interface {
	Prepare(ctx context.Context) error
}

// Splitter is an arm whose duet trial of a split round (Spec.Split) is not a trial like its others: run on the
// stack its trial in turn just ran on, counted as part of that trial rather than as a trial of the stack's own.
// The engine calls SplitTrial there, and Trial where the arm is not a Splitter.
type Splitter interface {
	SplitTrial(ctx context.Context) (Observation, error)
}

// Filler is an arm that can keep loading what it runs on, unmeasured. In a duet round an arm whose trial ends
// while a rival's still runs fills until the last one ends, so that no trial's end runs alone: a trial's
// rivals' load lasts its whole length, whichever arm is faster (the demo's opcache off ran its last 0.7 s of 3.2
// alone, at less CPU a request, and its rounds varied by 6% where the slower arm's tail was longer or shorter).
type Filler interface {
	Fill(ctx context.Context)
}

// Look is where an experiment stands before a round.
type Look struct {
	Rounds int // complete rounds so far
	// Promising: a race whose incumbent is still in, where some challenger's estimate is at least a third of
	// the minimum effect in its favour (the race may yet find a gain); or a race whose incumbent is out.
	Promising bool
	// Needed estimates the rounds in all after which some undecided comparison of a live challenger with the
	// incumbent would be decided, at its estimate and spread; in Smallest, after which the first live arm would
	// be shown within the margin or worse (0 when not known).
	Needed int
	// Live is the arms still in.
	Live int
}

// Progress is the experiment's position.
type Progress struct {
	Name  string
	Round int // 1-based
	Arm   string
	Live  int // arms still in
}

// Statuses of an arm at the end.
const (
	StatusWinner  = "winner"  // a race's pick
	StatusDropped = "dropped" // taken out: shown worse than another arm, or no better than the incumbent
	StatusDecided = "decided" // Versus: its comparison with Arms[0] was decided
	StatusOpen    = "open"    // still in when the experiment ended undecided
	StatusYielded = "yielded" // Versus: out of the rounds, undecided, its comparison beyond the time's reach
	StatusError   = "error"   // failed to start or in a trial
	StatusRef     = "reference"
	StatusWithin  = "within" // Smallest: shown within the minimum effect of the best, not the first such
)

// Why an experiment ended.
const (
	EndDecided     = "decided"
	EndBudget      = "budget"
	EndCap         = "max rounds"
	EndFutile      = "futile"
	EndInterrupted = "interrupted"
	EndError       = "error"
)

// Outcome is what an experiment found.
type Outcome struct {
	Name   string `json:"name"`
	Winner int    `json:"winner"` // Race and Smallest: the arm chosen; Versus: 0
	// Best, in Smallest, is the live arm with the best estimate, which every other arm's Vs is against.
	Best   int `json:"best,omitempty"`
	Rounds int `json:"rounds"` // complete rounds
	// Needed, in Smallest left undecided, is the rounds in all after which the race would have its answer at its
	// estimates and spreads (Look.Needed at its end; MaxRoundsNeeded: not at these estimates); 0 when decided or
	// not known. An open size's own comparison may be rounds from a verdict that does not decide the race.
	Needed int         `json:"needed,omitempty"`
	Ended  string      `json:"ended"`
	Arms   []ArmResult `json:"arms"`
	// Order is the arms' names in the order their trials ran.
	Order []string `json:"order"`
	// Partial: interrupted; the comparisons stand as they were, undecided ones inconclusive.
	Partial bool `json:"partial,omitempty"`
	// HigherIsBetter is the Spec's: which way the arms' Values point.
	HigherIsBetter bool `json:"higher_is_better"`
}

// ArmResult is one arm's part in an experiment.
type ArmResult struct {
	Name   string        `json:"name"`
	Status string        `json:"status"`
	Note   string        `json:"note,omitempty"` // why it left, or why it failed
	Trials []Observation `json:"trials"`
	// Round is the round of each trial (1-based): trials of one round pair up.
	Round    []int `json:"round"`
	Requests int64 `json:"requests"`
	Errors   int64 `json:"errors"`
	// Vs is this arm against Arms[0]: the estimate and interval of the relative change of its Value, the
	// anytime-valid p-value and the verdict (nil for Arms[0], and for an arm that never shared a round with it).
	Vs *stats.Comparison `json:"vs,omitempty"`
	// Vs2 is the same on the Spec's second figure (nil without one).
	Vs2 *stats.Comparison `json:"vs_second,omitempty"`
	// Within, in Smallest, says the arm was shown within the minimum effect of every arm live at the end.
	Within bool  `json:"within,omitempty"`
	Err    error `json:"-"`
}

// Decisive is the comparison that speaks for a race's choice: the winner against the incumbent when it
// changed, else the best challenger against the incumbent (the closest call); with its index, or -1 and nil
// when no arm was compared with the incumbent.
func (o *Outcome) Decisive() (int, *stats.Comparison) {
	if o.Winner != 0 {
		return o.Winner, o.Arms[o.Winner].Vs
	}
	best, idx := math.Inf(-1), -1
	for i, a := range o.Arms {
		if i == 0 || a.Vs == nil || a.Status == StatusError {
			continue
		}
		gain := a.Vs.LogEstimate
		if !o.HigherIsBetter {
			gain = -gain
		}
		if gain > best {
			best, idx = gain, i
		}
	}
	if idx < 0 {
		return -1, nil
	}
	return idx, o.Arms[idx].Vs
}

// ErrNoArms says the experiment was given fewer than two arms.
var ErrNoArms = errors.New("an experiment needs at least two arms")

// Run runs the experiment. It returns the outcome so far with ctx's error when interrupted, and with an error
// when Arms[0] fails (nothing can be compared with it); other arms that fail get the status error.
func Run(ctx context.Context, s Spec) (*Outcome, error) {
	x, err := New(s)
	if err != nil {
		return nil, err
	}
	return x.Run(ctx)
}

// Experiment is one experiment that may be resumed: one that ended undecided for want of time (its budget, its
// futility rule) can run more rounds later, in fresh trials of the arms still in. A confidence sequence is
// valid at any stopping time, and a pause is a stopping rule like any other, so the rounds added later are
// judged as soundly as if they had run on; the pairs keep the share of the error budget they were given.
type Experiment struct {
	e   *run
	ran bool
}

// New prepares an experiment; Run runs it.
func New(s Spec) (*Experiment, error) {
	if len(s.Arms) < 2 {
		return nil, ErrNoArms
	}
	if s.Split && s.Duet {
		return nil, errors.New("an experiment's rounds are split or duets, not both")
	}
	return &Experiment{e: newRun(s)}, nil
}

// Run runs the experiment until it is decided or ends otherwise (see Run, the function).
func (x *Experiment) Run(ctx context.Context) (*Outcome, error) {
	all := make([]int, len(x.e.s.Arms))
	for i := range all {
		all[i] = i
	}
	x.ran = true
	err := x.e.run(ctx, all)
	x.e.finish()
	return x.e.out, err
}

// Resumable says whether the experiment ended undecided for want of time (its budget or its futility rule)
// with two arms or more still in.
func (x *Experiment) Resumable() bool {
	o := x.e.out
	return x.ran && !o.Partial && (o.Ended == EndBudget || o.Ended == EndFutile) && len(x.e.live) >= 2
}

// Look is where the experiment stands now.
func (x *Experiment) Look() Look {
	return x.e.position()
}

// Pair is what the rounds so far show of arm j against Arms[0]: the mean log ratio (positive when j is the
// better) and a round's spread, as the pair's confidence sequence decides with them; ok is false before two
// rounds.
func (x *Experiment) Pair(j int) (mean, sd float64, ok bool) {
	if j <= 0 || j >= len(x.e.s.Arms) {
		return 0, 0, false
	}
	s := x.e.seq[0][j]
	return s.Mean(), s.SD(), s.N() >= 2
}

// Resume runs a resumable experiment on: the arms still in start again, and rounds run while cont says so
// (cont replaces Spec.Continue; the futility rule is off, since the caller chose to spend the time) until it is
// decided. The outcome is the whole experiment's.
func (x *Experiment) Resume(ctx context.Context, cont func(Look) bool) (*Outcome, error) {
	if !x.Resumable() {
		return x.e.out, errors.New("experiment " + x.e.s.Name + " cannot be resumed: it did not end for want of time")
	}
	e := x.e
	e.s.Continue, e.s.FutileAfter = cont, 0
	if len(e.orders) == 0 || len(e.orders[0]) != len(e.live) {
		e.scheduled = 0 // the live set changed: its balanced orders start over
	}
	// Else the balanced orders go on where they stopped: a caller that resumes an experiment a round at a time
	// (gate's turns) would otherwise run every round in the first order, one arm always first.
	// What the last finish said of the arms still in is said again at this one's: a Smallest race's best arm
	// states no comparison, and a look that moved the best left it the one against the old best (the 10-minute
	// demo's row read "max_children=8 vs 8", 2026-11-29, t5).
	for _, i := range e.live {
		a := &e.out.Arms[i]
		a.Status, a.Note, a.Within, a.Vs, a.Vs2 = StatusOpen, "", false, nil, nil
	}
	err := e.run(ctx, append([]int(nil), e.live...))
	e.finish()
	return e.out, err
}

// run starts the arms idx and runs rounds until the experiment ends.
func (e *run) run(ctx context.Context, idx []int) error {
	errs := e.start(ctx, idx)
	if ctx.Err() != nil {
		return e.interrupted(ctx)
	}
	for x, err := range errs {
		if err == nil {
			continue
		}
		i := idx[x]
		e.fail(i, fmt.Errorf("start: %w", err))
		if i == 0 {
			e.out.Ended = EndError
			return fmt.Errorf("%s: %w", e.s.Arms[0].Name(), err)
		}
	}
	for {
		if e.out.Rounds >= e.s.MinRounds && e.done() {
			e.out.Ended = EndDecided
			return nil
		}
		if e.s.MaxRounds > 0 && e.out.Rounds >= e.s.MaxRounds {
			e.out.Ended = EndCap
			return nil
		}
		if e.s.Continue != nil && !e.s.Continue(e.position()) {
			e.out.Ended = EndBudget
			return nil
		}
		if e.futile() {
			e.out.Ended = EndFutile
			return nil
		}
		if err := e.round(ctx); err != nil {
			if ctx.Err() != nil {
				return e.interrupted(ctx)
			}
			e.out.Ended = EndError
			return err
		}
		e.look()
	}
}

// start starts the arms idx, all at once when the Spec allows (a fresh pool's settling is seconds of waiting for
// php-fpm to fork, which arms can do side by side), and returns each one's error, in idx's order.
func (e *run) start(ctx context.Context, idx []int) []error {
	errs := make([]error, len(idx))
	if !e.s.ParallelStart {
		for x, i := range idx {
			if errs[x] = e.s.Arms[i].Start(ctx); errs[x] != nil && ctx.Err() != nil {
				break
			}
		}
		return errs
	}
	var wg sync.WaitGroup
	for x, i := range idx {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[x] = e.s.Arms[i].Start(ctx)
		}()
	}
	wg.Wait()
	return errs
}

func (e *run) position() Look {
	return Look{Rounds: e.out.Rounds, Promising: e.promising(), Needed: e.needed(), Live: len(e.live)}
}

func (e *run) interrupted(ctx context.Context) error {
	e.out.Ended, e.out.Partial = EndInterrupted, true
	return ctx.Err()
}
