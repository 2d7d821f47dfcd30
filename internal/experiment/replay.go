package experiment

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"os"
	"strings"
	"sync"
)

// Noise is recorded trial-to-trial variation, to replay: rounds of residual log figures (one a slot, in the
// order the recorded round ran its trials) from real interleaved runs, in run order, each arm's own mean in
// its experiment taken out (a stack's own offset is planted again by the replay, ReplayOptions.StackSD).
// Replaying whole rounds, in blocks of consecutive ones, keeps what trials of one round share (a neighbour's
// burst hits both arms of a pair), what one trial leaves to the next, drift, and the real tails.
type Noise struct {
	Source string      `json:"source"`
	Metric string      `json:"metric"`
	Rounds [][]float64 `json:"rounds"`
	// Runs are the recorded runs (or sets of runs) the rounds come from, in order; Tuning marks those on whose
	// replays the engine's parameters were chosen: figures are reported on the others (Held).
	Runs []NoiseRun `json:"runs,omitempty"`
}

// NoiseRun is a recorded run's part of a Noise: its rounds from From to the next run's From.
type NoiseRun struct {
	Source string `json:"source"`
	From   int    `json:"from"`
	Tuning bool   `json:"tuning,omitempty"`
}

// Tuning is the noise of the runs the engine's parameters were chosen on, Held that of the others: figures
// reported on rounds that chose the method would flatter it. Without Runs, all of it is both.
func (n Noise) Tuning() Noise { return n.part(true) }

// Held is the noise of the runs the engine's parameters were not chosen on (see Tuning).
func (n Noise) Held() Noise { return n.part(false) }

func (n Noise) part(tuning bool) Noise {
	if len(n.Runs) == 0 {
		return n
	}
	out := Noise{Metric: n.Metric}
	var sources []string
	for i, r := range n.Runs {
		if r.Tuning != tuning {
			continue
		}
		to := len(n.Rounds)
		if i+1 < len(n.Runs) {
			to = n.Runs[i+1].From
		}
		out.Runs = append(out.Runs, NoiseRun{Source: r.Source, From: len(out.Rounds), Tuning: r.Tuning})
		out.Rounds = append(out.Rounds, n.Rounds[r.From:to]...)
		sources = append(sources, r.Source)
	}
	out.Source = strings.Join(sources, ", ")
	return out
}

// Recorded is one trial of a real run, in run order: Run is the recorded run, Group the experiment it belongs to
// (a knob's comparison), Arm the configuration.
type Recorded struct {
	Run, Group, Arm string
	Value           float64
}

// NoiseFrom extracts the rounds of recorded trials: within a group, a round ends where an arm comes again.
// Each value becomes its log less the mean log of its arm in its group, scaled up by sqrt(n/(n-1)) (taking
// out the mean shrinks n residuals' spread by that much). Each run's first round is noted in Runs.
func NoiseFrom(source, metric string, trials []Recorded) Noise {
	type key struct{ g, a string }
	sum, cnt := map[key]float64{}, map[key]int{}
	for _, t := range trials {
		if t.Value > 0 {
			k := key{t.Group, t.Arm}
			sum[k] += math.Log(t.Value)
			cnt[k]++
		}
	}
	n := Noise{Source: source, Metric: metric}
	var cur []float64
	seen := map[string]bool{}
	group, run := "", ""
	flush := func() {
		if len(cur) >= 2 {
			n.Rounds = append(n.Rounds, cur)
		}
		cur, seen = nil, map[string]bool{}
	}
	for _, t := range trials {
		k := key{t.Group, t.Arm}
		if t.Group != group || seen[t.Arm] {
			flush()
			group = t.Group
		}
		if t.Run != run {
			run = t.Run
			n.Runs = append(n.Runs, NoiseRun{Source: run, From: len(n.Rounds)})
		}
		if t.Value <= 0 || cnt[k] < 2 {
			continue
		}
		c := float64(cnt[k])
		cur = append(cur, (math.Log(t.Value)-sum[k]/c)*math.Sqrt(c/(c-1)))
		seen[t.Arm] = true
	}
	flush()
	return n
}

// LoadNoise reads Noise from a JSON file.
func LoadNoise(path string) (Noise, error) {
	var n Noise
	data, err := os.ReadFile(path)
	if err != nil {
		return n, err
	}
	if err := json.Unmarshal(data, &n); err != nil {
		return n, fmt.Errorf("%s: %w", path, err)
	}
	if len(n.Rounds) == 0 {
		return n, fmt.Errorf("%s: no rounds", path)
	}
	return n, nil
}

// SD is the spread of a slot's residual against another's in the same round: the noise of a log ratio.
func (n Noise) SD() float64 {
	var ss float64
	var k int
	for _, r := range n.Rounds {
		d := r[1] - r[0]
		ss += d * d
		k++
	}
	if k == 0 {
		return 0
	}
	return math.Sqrt(ss / float64(k))
}

// ReplayOptions make a replay keep what makes real runs hard.
type ReplayOptions struct {
	// Block is the mean length of the runs of consecutive recorded rounds replayed in order (a stationary
	// bootstrap: lengths geometric, each run starting at a random round; 0: DefaultBlock, 1: rounds drawn one by
	// one). Recorded log ratios are correlated from round to round (lag 1: 0.11) and an arm's own residuals
	// more so (0.35 to 0.74): a stack drifts. Rounds drawn one by one would replay none of it.
	Block float64
	// StackSD is the spread of a stack's own offset (log scale): each stack an arm runs on gets one, drawn
	// when it starts. A stack's offset lasts its life ("where each lands in memory"), so one stack an arm reads
	// as the configuration's effect.
	StackSD float64
	// NewStackEvery is the trials an arm's stack serves before a fresh one takes over (0: one for its life).
	NewStackEvery int
	// Bursts plants failures.
	Bursts Bursts
}

// Bursts are failures planted in replayed trials: each trial has a burst with chance Rate, of Mean requests on
// average (geometric), of the trial's Requests; the figure drops by the share that failed. Real failures cluster,
// which the engine's failure tests must not read as an arm's: Prone of the stacks (drawn when a stack is first
// used) have a burst in ProneRate of their trials instead, and with Spill a burst outlasts its trial and fails
// the next trial run too, whichever arm's (a stall; in AB, BA order a round's last trial and the next round's
// first are the same arm's).
type Bursts struct {
	Rate, Mean       float64
	Requests         int64
	Prone, ProneRate float64
	Spill            bool
}

// DefaultBlock is the mean length of a replay's blocks of consecutive rounds: about a knob's race.
const DefaultBlock = 20

// Replay serves arms whose trials replay recorded noise: round t of every arm of an experiment comes from the
// same replayed round, which runs through the record in blocks of consecutive rounds, and the trial in the
// p-th place of a round gets the recorded round's p-th trial (slot order kept: what a round's first trial
// leaves to its second is replayed too). Its figure is that, times the arm's planted effect and its stack's
// offset, less planted failures.
type Replay struct {
	noise Noise
	rng   *rand.Rand
	o     ReplayOptions
	wide  int // the most trials a recorded round has
	// spilled: the last trial run had a burst that outlasts it (Bursts.Spill).
	spilled bool
	draws   [][]float64
	taken   []int // trials drawn from each replayed round so far: the next one's place
	at      cursor
	// next is the first round no arm has used: arms made together (one experiment's, before any of them runs
	// a trial) share rounds, later ones start on fresh rounds; batch counts them.
	next  int
	batch *int
	mu    sync.Mutex // arms start side by side, and a duet round's trials run at once
}

// cursor is a place in the record and the rounds left in its block.
type cursor struct{ at, left int }

// NewReplay replays n with rng, in blocks of DefaultBlock rounds, with no stack offsets or failures planted.
func NewReplay(n Noise, rng *rand.Rand) *Replay {
	return NewReplayWith(n, rng, ReplayOptions{})
}

// NewReplayWith replays n with rng as o says.
func NewReplayWith(n Noise, rng *rand.Rand, o ReplayOptions) *Replay {
	if !(o.Block >= 1) {
		o.Block = DefaultBlock
	}
	r := &Replay{noise: n, rng: rng, o: o}
	for _, round := range n.Rounds {
		r.wide = max(r.wide, len(round))
	}
	return r
}

// row is the t-th replayed round's residuals (0-based), one a place, for an experiment of k arms. Its trials
// ran together: a block starts only on a recorded round of k trials or more, and an experiment wider than any
// recorded round takes its other places from the rounds that followed (seconds later, sharing most of the
// machine's drift), where a round from elsewhere in the record would share none.
func (r *Replay) row(t, k int) []float64 {
	for len(r.draws) <= t {
		var row []float64
		for len(row) < k {
			row = append(row, r.noise.Rounds[r.advance(k-len(row), len(row) == 0)]...)
		}
		r.draws, r.taken = append(r.draws, row), append(r.taken, 0)
	}
	return r.draws[t]
}

// advance is the next recorded round, for k places: a new block starts at a random round of k trials or more
// (of the most there are when none has k) when the last one ends, the record does, or its next round is
// narrower; join continues the block regardless (places of a round already begun).
func (r *Replay) advance(k int, fresh bool) int {
	c := &r.at
	if fresh && (c.left <= 0 || c.at >= len(r.noise.Rounds) || len(r.noise.Rounds[c.at]) < min(k, r.wide)) {
		c.at = r.start(k)
		c.left = 1
		if p := 1 / r.o.Block; p < 1 {
			c.left += int(math.Log(1-r.rng.Float64()) / math.Log(1-p))
		}
	}
	at := min(c.at, len(r.noise.Rounds)-1)
	c.at++
	if fresh {
		c.left--
	}
	return at
}

// start is a random recorded round with k trials or more (with the most there are, when none has k).
func (r *Replay) start(k int) int {
	k = min(k, r.wide)
	for {
		if i := r.rng.Intn(len(r.noise.Rounds)); len(r.noise.Rounds[i]) >= k {
			return i
		}
	}
}

// Arm is a replayed arm whose figures are exp(effect) times the recorded ones': effect is the true log ratio
// against an arm with effect 0. Arms made one after another, before any of them runs a trial, belong to one
// experiment: they replay the same recorded rounds.
func (r *Replay) Arm(name string, effect float64) *ReplayArm {
	if r.batch == nil {
		r.batch = new(int)
	}
	*r.batch++
	return &ReplayArm{name: name, r: r, effect: effect, first: r.next, batch: r.batch}
}

// ReplayArm is one arm of a Replay. Its trials may run at the same time as its rivals' (a duet round, Spec.Duet):
// every draw, shared with the replay's other arms, is made under the replay's lock, and in a duet round when the
// engine prepares the arm (Prepare), one arm after another in the round's order, so that which recorded slot,
// offset and burst an arm gets does not depend on the order its goroutine runs in: a seed's run is reproducible.
type ReplayArm struct {
	name   string
	r      *Replay
	effect float64
	// first is the replay's round of its first trial, as if it had run without a pause: an arm started again
	// after a Stop (a resumed experiment) goes on in rounds no arm has used, the same for the arms of its
	// experiment, since they start again together.
	first  int
	trials int
	batch  *int // the arms of its experiment
	// stacks are the offsets of the stacks its trials ran on, by NewStackEvery's turn; prone says which
	// stacks fail often (Bursts.Prone), by the stack's id.
	stacks []float64
	prone  map[int]bool
	// ready is its next trial's figure, drawn by Prepare (nil: drawn when the trial runs).
	ready *Observation
	// Stack, when set, gives the stack trial i (0-based) runs on and its offset, in place of the replay's own
	// draws: a caller that keeps stacks across experiments (tune holds its best configuration's) says which.
	// It is called one trial at a time, never under the replay's lock.
	Stack func(i int) (id int, offset float64)
	// Started and Stopped count the engine's calls.
	Started, Stopped int
}

func (a *ReplayArm) Name() string { return a.name }

func (a *ReplayArm) Start(ctx context.Context) error {
	a.r.mu.Lock()
	defer a.r.mu.Unlock()
	if a.Stopped > 0 && a.trials > 0 {
		a.first = max(a.first, a.r.next-a.trials)
	}
	a.ready = nil // drawn for a round that did not run: the arm goes on in fresh rounds
	a.Started++
	return nil
}

func (a *ReplayArm) Stop() {
	a.r.mu.Lock()
	a.Stopped++
	a.r.mu.Unlock()
}

// Prepare draws the next trial's figure (experiment.Preparer): in a duet round the engine prepares the arms one
// after another in the round's order before their trials run at once, so the p-th arm of the round takes the
// recorded round's p-th slot, as in an alternating round.
func (a *ReplayArm) Prepare(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if a.ready == nil {
		o := a.draw()
		a.ready = &o
	}
	return nil
}

func (a *ReplayArm) Trial(ctx context.Context) (Observation, error) {
	if err := ctx.Err(); err != nil {
		return Observation{}, err
	}
	o := a.ready
	a.ready = nil
	if o == nil { // in turn: drawn as it runs
		d := a.draw()
		o = &d
	}
	a.r.mu.Lock()
	a.trials++
	a.r.mu.Unlock()
	return *o, nil
}

// draw is the figure of the arm's next trial: the replayed round's next slot, times the arm's planted effect and
// its stack's offset, less planted failures. Its draws come in the order they always did (the round, the stack's
// offset, a burst), so that a seed replays what it did before trials could run at once.
func (a *ReplayArm) draw() Observation {
	x, stack, offset := a.slot()
	if a.Stack != nil {
		stack, offset = a.Stack(a.trials) // the caller's draw, under its own lock
	}
	x += offset
	o := Observation{Value: 1000 * math.Exp(a.effect+x), Requests: 1, Stack: stack}
	a.fail(&o)
	return o
}

// slot takes the arm's next trial's place in its replayed round: the residual there, and the stack it runs on
// and its offset unless the caller gives them (Stack).
func (a *ReplayArm) slot() (x float64, stack int, offset float64) {
	r := a.r
	r.mu.Lock()
	defer r.mu.Unlock()
	t := a.first + a.trials
	slots := r.row(t, *a.batch)
	x = slots[min(r.taken[t], len(slots)-1)]
	r.taken[t]++
	r.next = max(r.next, t+1)
	r.batch = nil
	if a.Stack == nil {
		stack, offset = a.ownStack(a.trials)
	}
	return x, stack, offset
}

// fail plants a burst of failures in o, when its trial has one.
func (a *ReplayArm) fail(o *Observation) {
	r := a.r
	r.mu.Lock()
	defer r.mu.Unlock()
	if b := r.o.Bursts; b.Requests > 0 {
		o.Requests = b.Requests
		if a.burst(o.Stack) {
			o.Errors = min(geometric(r.rng, b.Mean), b.Requests)
			o.Requests -= o.Errors
			o.Value *= max(float64(o.Requests), 1) / float64(b.Requests)
		}
	}
}

// burst says whether the trial about to run on stack has a burst of failures: one the trial drawn before left
// (Bursts.Spill: in a duet round, the trial beside it), or its own at its stack's rate. The caller holds the
// replay's lock.
func (a *ReplayArm) burst(stack int) bool {
	r, b := a.r, a.r.o.Bursts
	if r.spilled {
		r.spilled = false
		return true
	}
	rate := b.Rate
	if b.Prone > 0 {
		if a.prone == nil {
			a.prone = map[int]bool{}
		}
		if _, ok := a.prone[stack]; !ok {
			a.prone[stack] = r.rng.Float64() < b.Prone
		}
		if a.prone[stack] {
			rate = b.ProneRate
		}
	}
	hit := rate > 0 && r.rng.Float64() < rate
	r.spilled = hit && b.Spill
	return hit
}

// ownStack is the stack trial i runs on and its offset, of the replay's own draws. The caller holds the replay's
// lock.
func (a *ReplayArm) ownStack(i int) (int, float64) {
	k := a.r.o.StackOf(i)
	if a.r.o.StackSD == 0 {
		return k, 0
	}
	for len(a.stacks) <= k {
		a.stacks = append(a.stacks, a.r.o.StackSD*a.r.rng.NormFloat64())
	}
	return k, a.stacks[k]
}

// StackOf is the stack an arm's trial i (0-based) runs on: a fresh one every NewStackEvery trials.
func (o ReplayOptions) StackOf(i int) int {
	if o.NewStackEvery > 0 {
		return i / o.NewStackEvery
	}
	return 0
}

// geometric is a draw on 1, 2, ... with mean m.
func geometric(rng *rand.Rand, m float64) int64 {
	if m <= 1 {
		return 1
	}
	return 1 + int64(math.Floor(math.Log(1-rng.Float64())/math.Log(1-1/m)))
}

// First is the replay's round of the arm's first trial (as if run without a pause): arms of one experiment
// share it.
func (a *ReplayArm) First() int { return a.first }

// Trials is how many trials the arm ran.
func (a *ReplayArm) Trials() int { return a.trials }

// Options are the replay's options.
func (r *Replay) Options() ReplayOptions { return r.o }

// Rand is the replay's source of randomness, for callers that draw stacks' offsets for it.
func (r *Replay) Rand() *rand.Rand { return r.rng }
