package gate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/phptune/phptune/internal/experiment"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/stats"
)

// comparison is one race of NEW against OLD: one URL's, or the whole mix's.
type comparison struct {
	Name string // "GET /path", or "mix"
	// mixes are what each version's trials send: the same requests, each version with its own session.
	mixes [2][]load.MixItem
	n     int // requests a CPU trial
	// meet is where a round's two trials meet before their latency trials; lat those trials.
	meet meeting
	lat  latency
	x    *experiment.Experiment
	// allow is the rounds the experiment may have run by the end of its turn (its Continue): one a turn.
	allow int
	ran   bool
	out   *experiment.Outcome
	// ended says why it stopped racing ("" while it races).
	ended string
	// cost is what calibrate foresees of a turn's CPU trials and of its latency trials; spent what all its turns
	// took, latSpent the latency trials' part of it (timed from their meeting), over turns and latRuns of them.
	cost           [2]time.Duration
	spent, latWall time.Duration
	latSpent       time.Duration
	turns, latRuns int
	// latNow says that this turn runs latency trials (latencyDue).
	latNow bool
}

// The reasons a comparison stops racing before the budget ends.
const (
	endedDecided  = "decided"
	endedWorse    = "shown worse"
	endedNotWorse = "shown not worse"
	endedFailFast = "stopped: another comparison shown worse (--fail-fast)"
)

// comparisons are the races to run: the mix's, when there is more than one URL, then each URL's; each version
// sends urls[v], the same URLs in the same order.
func comparisons(urls [2][]load.MixItem, base load.Request) []*comparison {
	var out []*comparison
	if len(urls[0]) > 1 {
		out = append(out, &comparison{Name: "mix", mixes: urls})
	}
	seen := map[string]int{}
	for i, u := range urls[0] {
		name := cmp.Or(u.RequestOver(base).Method, "GET") + " " + u.URI
		if seen[name]++; seen[name] > 1 {
			name = fmt.Sprintf("%s (%d)", name, seen[name])
		}
		out = append(out, &comparison{Name: name, mixes: [2][]load.MixItem{{u}, {urls[1][i]}}})
	}
	return out
}

// begin starts the first pair of stacks, which checks every URL in both versions, leaves out an access log's URL
// that fails in both, sets the comparisons up and times them.
func (g *gate) begin(ctx context.Context) error {
	g.progress("start", "starting both versions, checking %d URL(s)", len(g.o.URLs))
	g.first = true
	pair, wall, err := g.startPair(ctx, g.nextSerials())
	g.first = false
	if err != nil {
		return err
	}
	g.cur, g.startWall = pair, wall
	g.urls = [2][]load.MixItem{pair[0].urls, pair[1].urls}
	if err := g.keep(pair); err != nil {
		return err
	}
	g.setUp()
	return g.calibrate(ctx)
}

// keep keeps the URLs to race: an optional one (an access log's) that failed in both versions is left out with a
// warning (a deleted page, one behind a login); one that failed in one version only is that version's error.
func (g *gate) keep(pair [2]*live) error {
	var out []load.MixItem
	var urls [2][]load.MixItem
	for i, u := range g.o.URLs {
		inOld, inNew := pair[0].failed[i], pair[1].failed[i]
		switch {
		case inOld != "" && inNew != "":
			g.warnings = append(g.warnings, fmt.Sprintf("left out of the mix, it fails in both versions: %s", inNew))
		case inOld != "":
			return errors.New(inOld)
		case inNew != "":
			return errors.New(inNew)
		default:
			out = append(out, u)
			for v := range urls {
				urls[v] = append(urls[v], g.urls[v][i])
			}
		}
	}
	if len(out) == 0 {
		return fmt.Errorf("no URL of the mix answers in both versions: %s", g.warnings[0])
	}
	g.o.URLs, g.urls = out, urls
	return nil
}

// setUp makes the comparisons of the URLs, each with its share of the error budget.
func (g *gate) setUp() {
	g.comps = comparisons(g.urls, g.o.Request)
	g.budget = experiment.NewBudget(g.o.Alpha, len(g.comps))
	for _, c := range g.comps {
		c.x = g.newRace(c)
	}
}

// nextSerials numbers the next pair of stacks.
func (g *gate) nextSerials() [2]int {
	g.serial += 2
	return [2]int{g.serial - 1, g.serial}
}

// ahead is a pair of stacks starting beside a round.
type ahead struct {
	done chan struct{}
	pair [2]*live
	wall time.Duration
	err  error
}

// startAhead starts the next round's stacks while this round's trials run: beside a duet round the start falls
// on both versions alike, as any other load does, so a round costs the longer of its trials and a start, not
// both (tune does the same).
func (g *gate) startAhead(ctx context.Context) *ahead {
	a := &ahead{done: make(chan struct{})}
	serials := g.nextSerials()
	go func() {
		defer close(a.done)
		a.pair, a.wall, a.err = g.startPair(ctx, serials)
	}()
	return a
}

// discard waits for the pair and stops it.
func (a *ahead) discard() {
	<-a.done
	for _, l := range a.pair {
		if l != nil {
			l.stop()
		}
	}
}

// rounds runs rounds until every comparison has stopped racing or the budget cannot buy another round. A round is
// every comparison still racing taking its turn, one round of its experiment, on the round's pair of stacks;
// then both versions move to a fresh pair. Each comparison's rounds are so each on fresh stacks: their spread
// shows the stacks' offsets, which the engine is also told of (Spec.StackSD).
func (g *gate) rounds(ctx context.Context) error {
	for {
		racing := g.racing()
		if len(racing) == 0 {
			return nil
		}
		racing, watch := g.takingTurns(racing)
		cost := g.roundCost(racing)
		left := g.deadline.Sub(g.clock.Now())
		if left < cost {
			return nil
		}
		var next *ahead
		g.calm = nil
		if left >= 2*cost {
			next = g.startAhead(ctx)
			g.calm = next.done
		}
		began := g.clock.Now()
		err := g.round(ctx, racing)
		if err != nil || g.failedFast() {
			if next != nil {
				next.discard()
			}
			return err
		}
		if next == nil {
			return nil
		}
		<-next.done
		if next.err != nil {
			return next.err
		}
		g.stopAll()
		g.cur, g.startWall = next.pair, next.wall
		if watch >= 0 {
			g.watchWall[watch] += g.clock.Now().Sub(began)
		}
	}
}

// round gives every comparison in racing its turn, in an order that turns from round to round.
func (g *gate) round(ctx context.Context, racing []*comparison) error {
	g.roundsRun++
	for i := range racing {
		c := racing[(i+g.roundsRun)%len(racing)]
		// A phase a round: a log that prints a line a phase (CI) shows every round.
		g.progress(fmt.Sprintf("round %d", g.roundsRun), "round %d: %s", g.roundsRun, c.Name)
		if err := g.turn(ctx, c); err != nil {
			return err
		}
		if g.o.FailFast && c.ended == endedWorse {
			return nil
		}
	}
	return nil
}

// failedFast says whether a comparison was shown worse and the rounds stop there (Options.FailFast); the ones still
// racing then end so.
func (g *gate) failedFast() bool {
	if !g.o.FailFast || !slices.ContainsFunc(g.comps, func(c *comparison) bool { return c.ended == endedWorse }) {
		return false
	}
	for _, c := range g.racing() {
		c.ended = endedFailFast
	}
	return true
}

// turn runs one more round of c's experiment and notes whether it stops racing: decided, shown worse on either
// figure, or shown not worse on CPU with its p99 decided not worse (better or no difference), which is all the
// gate asks (a confidence sequence holds at any stopping time, this one included). A p99 merely not shown worse
// races on while the budget lasts: a tail's noise may hide a change for a few rounds (a 20 ms sleep read +2.8%
// [-11%, +19%] in 4 rounds on a busy machine), and the rounds left are what may show it.
func (g *gate) turn(ctx context.Context, c *comparison) error {
	began := g.clock.Now()
	c.allow++
	c.latNow, c.latWall = g.latencyDue(c), 0
	var err error
	if !c.ran {
		c.ran = true
		c.out, err = c.x.Run(ctx)
	} else {
		c.out, err = c.x.Resume(ctx, func(l experiment.Look) bool { return l.Rounds < c.allow })
	}
	c.turns++
	c.spent += g.clock.Now().Sub(began)
	if c.latWall > 0 {
		c.latRuns++
		c.latSpent += c.latWall
	}
	if err != nil {
		return fmt.Errorf("%s: %w", c.Name, err)
	}
	newArm := c.out.Arms[1]
	switch {
	case newArm.Status == experiment.StatusError:
		return fmt.Errorf("%s: %s", c.Name, newArm.Note)
	case c.out.Ended == experiment.EndDecided:
		c.ended = endedDecided
	case g.gates(c) == Worse:
		c.ended = endedWorse
	case g.settled(c):
		c.ended = endedNotWorse
	case !c.x.Resumable():
		c.ended = c.out.Ended
	}
	return nil
}

// takingTurns are the comparisons of racing that take a turn in the next round, and which of watchWall the
// round counts to (-1: none). One that races on only to watch its p99 (watching) takes its turns only in rounds
// that keep its share of the wall time since then to watchShare, the rest going to those still open. A round of
// theirs is long (each turn a CPU trial and latency trials: 2 s on the demo) where an open page's turn may be
// short; taking a turn every other round, they took 80 s of a 2-minute run, and /remote, 14 to 18 rounds, was
// left undecided in 2 runs of 4 of the demo against itself (docs/ci.md).
func (g *gate) takingTurns(racing []*comparison) ([]*comparison, int) {
	var open []*comparison
	leaning := false
	for _, c := range racing {
		if g.watching(c) {
			leaning = leaning || c.x.SecondLeans(1, trialLeanRisk)
		} else {
			open = append(open, c)
		}
	}
	switch {
	case len(open) == 0 || len(open) == len(racing):
		return racing, -1
	case float64(g.watchWall[1]) <= watchShare(leaning)*float64(g.watchWall[0]+g.watchWall[1]):
		return racing, 1
	}
	return open, 0
}

// watching says whether c races on only to watch its p99: shown not worse for the gate, and its CPU decided for
// the engine (better, no difference). One whose CPU is not worse but not yet shown within the minimum effect
// races for its verdict: in runs of a route made 20% cheaper every page but the route was not worse early, all
// of them then took every round, and /remote was left inconclusive in 1 of 3 at 11 rounds (docs/ci.md).
func (g *gate) watching(c *comparison) bool {
	if c.out == nil || g.gates(c) != NotWorse {
		return false
	}
	vs := c.out.Arms[1].Vs
	return vs != nil && vs.Verdict != stats.Inconclusive
}

// watchShare is the most of the wall time the rounds with the watching comparisons take, while some others are
// open: half while one's p99 leans worse at trialLeanRisk (its rounds may show it worse), else a quarter. The
// p99 of a page whose CPU is settled has so a quarter to be seen worse in, while a page left open, which ends
// the run undecided (exit 4), has three quarters to be decided in.
func watchShare(leaning bool) float64 {
	if leaning {
		return 0.5
	}
	return 0.25
}

// racing are the comparisons still racing.
func (g *gate) racing() []*comparison {
	var out []*comparison
	for _, c := range g.comps {
		if c.ended == "" {
			out = append(out, c)
		}
	}
	return out
}

// roundCost foresees a round of racing: each comparison's next turn, and at least a start of the next pair
// beside it.
func (g *gate) roundCost(racing []*comparison) time.Duration {
	var d time.Duration
	for _, c := range racing {
		d += g.turnCost(c)
	}
	return max(d, g.startWall)
}

// turnCost foresees c's next turn: its CPU trials and, when due, its latency trials, each as long as they have
// taken on average so far (before any, what calibrate foresaw).
func (g *gate) turnCost(c *comparison) time.Duration {
	cpu, lat := c.cost[0], c.cost[1]
	if n := c.turns; n > 0 {
		cpu = (c.spent - c.latSpent) / time.Duration(n)
	}
	if n := c.latRuns; n > 0 {
		lat = c.latSpent / time.Duration(n)
	}
	if !g.latencyDue(c) {
		lat = 0
	}
	return cpu + lat
}
