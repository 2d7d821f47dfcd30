package experiment

import (
	"context"
	"errors"
	"math"
	"math/rand"
	"sync"
	"testing"
)

// splitMachine is the noise of a split round's trials, for arms whose figures are goodput (Value) and capacity
// (Second): the machine's speed, drawn afresh for each trial in turn and once for the round's duet trials,
// moves both figures alike; the share of the machine an arm gets (goodput over capacity) has noise of its own.
// A trial knows its pass by the count of trials before it: a round of arms trials in turn, then as many at once.
type splitMachine struct {
	mu          sync.Mutex
	rng         *rand.Rand
	arms, calls int
	speed, own  float64 // the sds
	duet        float64 // this round's duet draw
	duetTrials  int
}

// draw is the machine's speed for the next trial and whether it runs in the duet pass.
func (m *splitMachine) draw() (float64, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	pos := m.calls % (2 * m.arms)
	m.calls++
	if pos < m.arms {
		return m.speed * m.rng.NormFloat64(), false
	}
	if pos == m.arms {
		m.duet = m.speed * m.rng.NormFloat64()
	}
	m.duetTrials++
	return m.duet, true
}

// splitArm is an arm of a split experiment: its share and capacity effects on the log scale; its own noise
// drawn from its own source, so that the order the duet's goroutines run in does not change what it draws.
type splitArm struct {
	name            string
	share, capacity float64
	m               *splitMachine
	rng             *rand.Rand
	noCapacity      bool
	failInDuet      bool
	prepares        int
	splitTrials     int
}

// splitterArm is a splitArm that is a Splitter.
type splitterArm struct{ *splitArm }

func (a splitterArm) SplitTrial(ctx context.Context) (Observation, error) {
	a.m.mu.Lock()
	a.splitTrials++
	a.m.mu.Unlock()
	return a.Trial(ctx)
}

func (a *splitArm) Name() string                    { return a.name }
func (a *splitArm) Start(ctx context.Context) error { return nil }
func (a *splitArm) Stop()                           {}
func (a *splitArm) Prepare(ctx context.Context) error {
	a.prepares++
	return nil
}

func (a *splitArm) Trial(ctx context.Context) (Observation, error) {
	speed, duet := a.m.draw()
	if duet && a.failInDuet {
		return Observation{}, errors.New("php-fpm exited")
	}
	capacity := math.Exp(a.capacity + speed + 0.002*a.rng.NormFloat64())
	o := Observation{Value: 100 * capacity * math.Exp(a.share+a.m.own*a.rng.NormFloat64()), Requests: 100}
	if !a.noCapacity {
		o.Capacity = 50 * capacity
		o.Second = o.Capacity
	}
	return o, nil
}

func newSplitArms(seed int64, speed, own float64, effects ...[2]float64) (*splitMachine, []Arm) {
	m := &splitMachine{rng: rand.New(rand.NewSource(seed)), arms: len(effects), speed: speed, own: own}
	var arms []Arm
	for i, e := range effects {
		arms = append(arms, &splitArm{name: string(rune('A' + i)), share: e[0], capacity: e[1], m: m,
			rng: rand.New(rand.NewSource(seed*7 + int64(i)))})
	}
	return m, arms
}

// TestASplitRoundReadsEachFigureWhereItIsFair: an arm's figure of a split round is its trial in turn's share of
// the machine times its duet trial's capacity, so the machine's speed, which moves every trial in turn on its
// own, cancels: B's +10% (a share of +4%, a capacity of +6%) is found in rounds where alternating rounds, at the
// same noise, cannot; each arm ran one trial in turn and one in the duet a round, and prepared once a round.
func TestASplitRoundReadsEachFigureWhereItIsFair(t *testing.T) {
	const runs, rounds = 200, 6
	found := map[bool]int{}
	for _, split := range []bool{false, true} {
		for r := range runs {
			m, arms := newSplitArms(int64(r), 0.08, 0.01, [2]float64{0, 0}, [2]float64{0.04, 0.06})
			out, err := Run(context.Background(), Spec{Name: "s", Arms: arms, Mode: Versus, HigherIsBetter: true,
				MinEffect: 0.03, Alpha: 0.01, Split: split, MaxRounds: rounds,
				Second: &Figure{Name: "capacity", HigherIsBetter: true}})
			if err != nil {
				t.Fatal(err)
			}
			if v := out.Arms[1].Vs; v != nil && v.Verdict == "better" {
				found[split]++
			}
			if split && r == 0 {
				if n := out.Rounds; n < 2 || m.duetTrials != 2*n || arms[0].(*splitArm).prepares != n {
					t.Errorf("%d rounds, %d duet trials, %d prepares: want 2 duet trials and a prepare a round",
						n, m.duetTrials, arms[0].(*splitArm).prepares)
				}
				if got := out.Arms[1].Vs.Estimate; math.Abs(got-0.105) > 0.02 {
					t.Errorf("B against A %+.3f, want about +0.105 (a share of +4%% times a capacity of +6%%)", got)
				}
			}
		}
	}
	t.Logf("+10%% found in %d rounds: alternating %d of %d runs, split %d", rounds, found[false], runs, found[true])
	if found[true] < runs*9/10 || found[false] > runs/2 {
		t.Errorf("found: split %d, alternating %d of %d: want split at least 90%%, alternating at most half",
			found[true], found[false], runs)
	}
}

// TestASplittersDuetTrialIsItsSplitTrial: an arm that is a Splitter runs its split round's duet trial through
// SplitTrial, one a round; its trials in turn through Trial.
func TestASplittersDuetTrialIsItsSplitTrial(t *testing.T) {
	m, arms := newSplitArms(3, 0.05, 0.01, [2]float64{0, 0}, [2]float64{0.1, 0})
	a, b := splitterArm{arms[0].(*splitArm)}, splitterArm{arms[1].(*splitArm)}
	out, err := Run(context.Background(), Spec{Name: "s", Arms: []Arm{a, b}, Mode: Versus, HigherIsBetter: true,
		MinEffect: 0.03, Alpha: 0.01, Split: true, MaxRounds: 3})
	if err != nil {
		t.Fatal(err)
	}
	if out.Rounds != 3 || a.splitTrials != 3 || b.splitTrials != 3 || m.calls != 12 {
		t.Errorf("%d rounds, split trials %d and %d of %d trials: want 3 rounds, 3 split trials each of 12",
			out.Rounds, a.splitTrials, b.splitTrials, m.calls)
	}
}

// TestSplitFailures: a challenger whose duet trial fails, or whose trials read no capacity, leaves with the
// status error and the others go on; an experiment asked for rounds both split and duets is refused.
func TestSplitFailures(t *testing.T) {
	_, arms := newSplitArms(1, 0.05, 0.01, [2]float64{0, 0}, [2]float64{0, 0}, [2]float64{0, 0})
	arms[1].(*splitArm).failInDuet = true
	arms[2].(*splitArm).noCapacity = true
	out, err := Run(context.Background(), Spec{Name: "f", Arms: arms, Mode: Race, HigherIsBetter: true,
		MinEffect: 0.03, Alpha: 0.01, Split: true, MaxRounds: 3})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 2; i++ {
		if a := out.Arms[i]; a.Status != StatusError {
			t.Errorf("%s: status %s (%v), want error", a.Name, a.Status, a.Err)
		}
	}
	if _, err := New(Spec{Name: "both", Arms: arms, Split: true, Duet: true}); err == nil {
		t.Error("an experiment of split duet rounds was taken")
	}
}

// An arm's figures of a split round: goodput 200 at capacity 50 in turn (the servers got 4 CPU-seconds a second),
// capacity 60 in the duet: goodput 240 and capacity 60; Value's step twice the turn's and the duet's; the requests
// and errors add; the second figure, p99 and stack are the turn's.
func TestSplitObservation(t *testing.T) {
	turn := Observation{Value: 200, Capacity: 50, Second: 7, Step: 0.01, Requests: 100, Errors: 1, P99: 7, Stack: 3}
	duet := Observation{Value: 150, Capacity: 60, Second: 9, SecondStep: 0.003, Step: 0.02, Requests: 80, Errors: 2,
		P99: 9, Stack: 4}
	got, err := splitObservation(turn, duet)
	if err != nil {
		t.Fatal(err)
	}
	want := Observation{Value: 240, Capacity: 60, Second: 7, Step: 0.04, Requests: 180, Errors: 3, P99: 7, Stack: 3}
	if math.Abs(got.Value-want.Value) > 1e-9 || math.Abs(got.Step-want.Step) > 1e-12 {
		t.Errorf("value %v step %v, want %v, %v", got.Value, got.Step, want.Value, want.Step)
	}
	got.Value, got.Step = want.Value, want.Step
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if _, err := splitObservation(Observation{Value: 200}, duet); err == nil {
		t.Error("a trial in turn without capacity was combined")
	}
}
