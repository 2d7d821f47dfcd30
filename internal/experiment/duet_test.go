package experiment

import (
	"context"
	"errors"
	"math"
	"math/rand"
	"sync"
	"testing"
	"time"
)

// duetArm is an arm for duet rounds: its trials may run at the same time as its rivals'. Each trial's figure is
// effect plus the machine's state while it runs (common, shared by trials that overlap) plus noise of its own.
type duetArm struct {
	name     string
	effect   float64
	m        *machine
	prepares int
	trials   int
	failAt   int // 1-based trial that fails (0: none)
	prepErr  error
	// inTrial counts the arms in a trial at once, the most seen in most.
	mu sync.Mutex
}

// machine is the noise trials share: a fresh draw of common noise for each batch of trials that overlap.
type machine struct {
	mu            sync.Mutex
	rng           *rand.Rand
	common, own   float64 // the sds
	running, most int
	cur           float64
	// overlap makes each trial wait for the round's others (those that prepared since the last batch) before
	// it ends, as real trials of a second or more overlap.
	overlap  bool
	prepared int
	barrier  int
	waiting  []chan struct{}
	log      []string
}

func (m *machine) enter(name string) float64 {
	m.mu.Lock()
	if m.running == 0 {
		m.cur = m.common * m.rng.NormFloat64()
		if m.overlap && len(m.waiting) == 0 {
			m.barrier, m.prepared = m.prepared, 0
		}
	}
	m.running++
	m.most = max(m.most, m.running)
	m.log = append(m.log, "trial "+name)
	v := m.cur + m.own*m.rng.NormFloat64()
	var wait chan struct{}
	if m.overlap && m.barrier > 1 {
		wait = make(chan struct{})
		m.waiting = append(m.waiting, wait)
		if len(m.waiting) == m.barrier {
			for _, w := range m.waiting {
				close(w)
			}
			m.waiting = nil
		}
	}
	m.mu.Unlock()
	if wait != nil {
		select {
		case <-wait:
		case <-time.After(5 * time.Second): // a round that never overlaps: the test fails on most
		}
	}
	return v
}

func (m *machine) leave() {
	m.mu.Lock()
	m.running--
	m.mu.Unlock()
}

func (a *duetArm) Name() string                    { return a.name }
func (a *duetArm) Start(ctx context.Context) error { return nil }
func (a *duetArm) Stop()                           {}
func (a *duetArm) Prepare(ctx context.Context) error {
	a.mu.Lock()
	a.prepares++
	a.mu.Unlock()
	a.m.mu.Lock()
	a.m.log = append(a.m.log, "prepare "+a.name)
	a.m.prepared++
	a.m.mu.Unlock()
	return a.prepErr
}

func (a *duetArm) Trial(ctx context.Context) (Observation, error) {
	a.mu.Lock()
	a.trials++
	n := a.trials
	a.mu.Unlock()
	x := a.m.enter(a.name)
	defer a.m.leave()
	if a.failAt > 0 && n >= a.failAt {
		return Observation{}, errors.New("php-fpm exited")
	}
	return Observation{Value: 1000 * math.Exp(a.effect+x), Requests: 500}, nil
}

// TestDuetRunsARoundsTrialsAtOnce: in a duet round every live arm's trial runs at the same time, after every arm
// prepared, and the round pairs up as an alternating one does.
func TestDuetRunsARoundsTrialsAtOnce(t *testing.T) {
	m := &machine{rng: rand.New(rand.NewSource(1)), common: 0.05, own: 0.005, overlap: true}
	arms := []*duetArm{{name: "A", m: m}, {name: "B", m: m, effect: 0.2}, {name: "C", m: m, effect: -0.2}}
	out, err := Run(context.Background(), Spec{Name: "duet", Arms: []Arm{arms[0], arms[1], arms[2]}, Mode: Race,
		HigherIsBetter: true, MinEffect: 0.03, Alpha: 0.01, Duet: true, MaxRounds: 4})
	if err != nil {
		t.Fatal(err)
	}
	if m.most != 3 {
		t.Errorf("at most %d trials ran at once, want 3", m.most)
	}
	// The first round: three prepares, then three trials.
	for i, l := range m.log[:6] {
		if want := i < 3; want != (l[:7] == "prepare") {
			t.Errorf("%v: prepares must all come before the trials", m.log[:6])
			break
		}
	}
	if out.Arms[1].Vs == nil || out.Arms[1].Vs.Verdict != "better" {
		t.Errorf("B (+22%%) against A: %+v, want better", out.Arms[1].Vs)
	}
	if out.Winner != 1 {
		t.Errorf("winner %d, want B", out.Winner)
	}
}

// TestDuetFailures: a challenger whose trial or preparation fails leaves with the status error and the others
// go on; an incumbent that fails ends the experiment with an error.
func TestDuetFailures(t *testing.T) {
	m := &machine{rng: rand.New(rand.NewSource(2)), common: 0.05, own: 0.005}
	a, b, c := &duetArm{name: "A", m: m}, &duetArm{name: "B", m: m, failAt: 2}, &duetArm{name: "C", m: m, prepErr: errors.New("no fresh stack")}
	out, err := Run(context.Background(), Spec{Name: "f", Arms: []Arm{a, b, c}, Mode: Race, HigherIsBetter: true,
		MinEffect: 0.03, Alpha: 0.01, Duet: true, MaxRounds: 3})
	if err != nil {
		t.Fatal(err)
	}
	if out.Arms[1].Status != StatusError || out.Arms[2].Status != StatusError {
		t.Errorf("statuses %s, %s: want error for both", out.Arms[1].Status, out.Arms[2].Status)
	}
	if c.trials != 0 {
		t.Errorf("C ran %d trials after failing to prepare", c.trials)
	}
	inc := &duetArm{name: "A", m: m, failAt: 3}
	_, err = Run(context.Background(), Spec{Name: "f", Arms: []Arm{inc, &duetArm{name: "B", m: m}}, Mode: Race,
		HigherIsBetter: true, MinEffect: 0.03, Alpha: 0.01, Duet: true, MaxRounds: 5})
	if err == nil {
		t.Error("the incumbent failed and the experiment did not say so")
	}
}

// TestDuetCancelsCommonNoise: where most of a round's noise is the machine's (common to trials that overlap),
// duet rounds decide an effect alternating rounds cannot in the same rounds, and A/A duet races stay within
// their alpha. The noise is a model of what was measured here (docs/engine.md "Duet rounds").
func TestDuetCancelsCommonNoise(t *testing.T) {
	const runs, rounds = 400, 12
	decided := map[bool]int{}
	falseVerdicts := 0
	for _, duet := range []bool{false, true} {
		for r := range runs {
			m := &machine{rng: rand.New(rand.NewSource(int64(r))), common: 0.03, own: 0.004}
			if duet {
				m.overlap = true
			}
			out, err := Run(context.Background(), Spec{Name: "n", Arms: []Arm{&duetArm{name: "A", m: m}, &duetArm{name: "B", m: m, effect: 0.05}},
				Mode: Race, HigherIsBetter: true, MinEffect: 0.02, Alpha: 0.01, Duet: duet, MaxRounds: rounds})
			if err != nil {
				t.Fatal(err)
			}
			if v := out.Arms[1].Vs; v != nil && v.Verdict == "better" {
				decided[duet]++
			}
			if !duet {
				continue
			}
			aa, err := Run(context.Background(), Spec{Name: "aa", Arms: []Arm{&duetArm{name: "A", m: m}, &duetArm{name: "B", m: m}},
				Mode: Race, HigherIsBetter: true, MinEffect: 0.02, Alpha: 0.01, Duet: true, MaxRounds: 100})
			if err != nil {
				t.Fatal(err)
			}
			if v := aa.Arms[1].Vs; v != nil && (v.Verdict == "better" || v.Verdict == "worse") {
				falseVerdicts++
			}
		}
	}
	t.Logf("+5%% decided in %d rounds: alternating %d of %d runs, duet %d; A/A duet false verdicts %d", rounds,
		decided[false], runs, decided[true], falseVerdicts)
	if decided[true] < runs*9/10 || decided[false] > runs/2 {
		t.Errorf("decided: duet %d, alternating %d of %d: want duet at least 90%%, alternating at most half", decided[true], decided[false], runs)
	}
	if falseVerdicts > runs/50 { // alpha 1%: 4 expected at the most, 8 allowed
		t.Errorf("A/A duet races: %d false verdicts in %d runs at alpha 1%%", falseVerdicts, runs)
	}
}

// pacedArm's trials take their time; as a Filler it records how long each of its fills ran past its trial.
type pacedArm struct {
	name  string
	trial time.Duration
	mu    sync.Mutex
	fills []time.Duration // each fill's length
}

func (a *pacedArm) Name() string                    { return a.name }
func (a *pacedArm) Start(ctx context.Context) error { return nil }
func (a *pacedArm) Stop()                           {}
func (a *pacedArm) Trial(ctx context.Context) (Observation, error) {
	time.Sleep(a.trial)
	return Observation{Value: 100}, nil
}
func (a *pacedArm) Fill(ctx context.Context) {
	began := time.Now()
	<-ctx.Done()
	a.mu.Lock()
	a.fills = append(a.fills, time.Since(began))
	a.mu.Unlock()
}

// TestADuetsFasterArmFillsUntilTheLastTrialEnds: in a duet round the arm whose trial ends first keeps loading
// until the slowest trial ends, and the slowest never fills; alternating rounds never fill.
func TestADuetsFasterArmFillsUntilTheLastTrialEnds(t *testing.T) {
	fast, slow := &pacedArm{name: "fast", trial: 5 * time.Millisecond}, &pacedArm{name: "slow", trial: 100 * time.Millisecond}
	spec := Spec{Name: "fill", Arms: []Arm{fast, slow}, Mode: Race, HigherIsBetter: true, MinEffect: 0.03, Alpha: 0.01,
		Duet: true, MaxRounds: 3}
	if _, err := Run(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	if len(fast.fills) != 3 || len(slow.fills) != 0 {
		t.Fatalf("fills: the fast arm %d, the slow one %d; want 3 and none", len(fast.fills), len(slow.fills))
	}
	for _, d := range fast.fills {
		if d < 40*time.Millisecond {
			t.Errorf("the fast arm filled for %s, less than the slow trial's rest (95 ms)", d)
		}
	}
	spec.Duet, fast.fills = false, nil
	if _, err := Run(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	if len(fast.fills) != 0 {
		t.Errorf("alternating rounds filled %d times", len(fast.fills))
	}
}
