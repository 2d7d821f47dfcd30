package experiment

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"os"
	"sync"
)

// Noise is recorded trial-to-trial variation, to replay: rounds of residual log figures (one a slot, an arm of
// the recorded round) from real interleaved runs, each arm's own mean taken out. Replaying whole rounds keeps
// what trials of one round share (a neighbour's burst hits both arms of a pair) and the real tails.
type Noise struct {
	Source string      `json:"source"`
	Metric string      `json:"metric"`
	Rounds [][]float64 `json:"rounds"`
}

// Recorded is one trial of a real run, in run order: Group is the experiment it belongs to (a knob's
// comparison), Arm the configuration.
type Recorded struct {
	Group, Arm string
	Value      float64
}

// NoiseFrom extracts the rounds of recorded trials: within a group, a round ends where an arm comes again.
// Each value becomes its log less the mean log of its arm in its group, scaled up by sqrt(n/(n-1)) (taking
// out the mean shrinks n residuals' spread by that much).
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
	group := ""
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

// Replay serves arms whose trials replay recorded noise: round t of every arm comes from the same recorded
// round (drawn at random, its slots shuffled), times the arm's planted effect.
type Replay struct {
	noise Noise
	rng   *rand.Rand
	width int
	draws [][]float64
	// next is the first round no arm has used; fresh counts the arms made since the last trial: arms made
	// together (one experiment's) share rounds and take slots in turn, later ones start on fresh rounds.
	next, fresh int
	mu          sync.Mutex // Start may be called side by side
}

// NewReplay replays n with rng for experiments of up to width arms.
func NewReplay(n Noise, rng *rand.Rand, width int) *Replay {
	return &Replay{noise: n, rng: rng, width: width}
}

// draw is the t-th round's residuals (0-based), one a slot: recorded rounds, slots shuffled, joined until wide
// enough (slots beyond one recorded round then come from another round, without its common part).
func (r *Replay) draw(t int) []float64 {
	for len(r.draws) <= t {
		var row []float64
		for len(row) < r.width {
			rec := r.noise.Rounds[r.rng.Intn(len(r.noise.Rounds))]
			for _, p := range r.rng.Perm(len(rec)) {
				row = append(row, rec[p])
			}
		}
		r.draws = append(r.draws, row[:r.width])
	}
	return r.draws[t]
}

// Arm is a replayed arm whose figures are exp(effect) times the recorded ones': effect is the true log ratio
// against an arm with effect 0. Arms made one after another, before any of them runs a trial, belong to one
// experiment: they replay the same recorded rounds, each in a slot of its own.
func (r *Replay) Arm(name string, effect float64) *ReplayArm {
	a := &ReplayArm{name: name, r: r, slot: r.fresh % r.width, effect: effect, first: r.next}
	r.fresh++
	return a
}

// ReplayArm is one arm of a Replay.
type ReplayArm struct {
	name   string
	r      *Replay
	slot   int
	effect float64
	// first is the replay's round of its first trial, as if it had run without a pause: an arm started again
	// after a Stop (a resumed experiment) goes on in rounds no arm has used, the same for the arms of its
	// experiment, since they start again together.
	first  int
	trials int
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
	a.Started++
	return nil
}

func (a *ReplayArm) Stop() {
	a.r.mu.Lock()
	a.Stopped++
	a.r.mu.Unlock()
}

func (a *ReplayArm) Trial(ctx context.Context) (Observation, error) {
	if err := ctx.Err(); err != nil {
		return Observation{}, err
	}
	x := a.r.draw(a.first + a.trials)[a.slot]
	a.trials++
	a.r.fresh = 0
	a.r.next = max(a.r.next, a.first+a.trials)
	return Observation{Value: 1000 * math.Exp(a.effect+x), Requests: 1}, nil
}

// First is the replay's round of the arm's first trial (as if run without a pause): arms of one experiment
// share it.
func (a *ReplayArm) First() int { return a.first }

// Trials is how many trials the arm ran.
func (a *ReplayArm) Trials() int { return a.trials }
