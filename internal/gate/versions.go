package gate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/phptune/phptune/internal/cpuset"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/stack"
)

// live is a running stack of a version.
type live struct {
	st     *stack.Stack
	serial int // its number among the run's stacks, from 1: the engine's Observation.Stack
	target load.Target
	// failed, on the run's first pair, says why each optional URL that failed its check did (by its index in
	// the mix): an access log's URL that fails in both versions is left out, not an error.
	failed map[int]string
	// urls are the mix as this version is sent it (its session's cookies after a login).
	urls []load.MixItem
}

func (l *live) stop() {
	if l.st != nil {
		l.st.Stop(context.Background())
	}
}

// poolName names the pool of every stack.
const poolName = "gate"

// config is how version v is served: the same PHP, nginx and pool for both, a static pool of a worker a
// connection (a fresh dynamic pool needs seconds of load to grow, and a worker's first requests cost more:
// tune's CPU trials run so too).
func (g *gate) config(v int) stack.Config {
	sc := g.o.Stack
	sc.App, sc.AppFS = g.ver[v].Dir, nil
	sc.FastStop = true // nothing is in flight when a stack stops
	sc.HTTPPort, sc.RunDir = 0, ""
	sc.Pools = []stack.Pool{{Name: poolName, Listen: stack.ListenUnix, PM: "static", MaxChildren: g.conc}}
	sc.NginxPool = poolName
	return sc
}

// startPair starts a stack of each version side by side, numbered serials, each checked and warmed, and says how
// long that took; on an error nothing of them is left running. The error names the version and the page. It
// touches nothing of g's but reads: it runs beside a round's trials.
func (g *gate) startPair(ctx context.Context, serials [2]int) ([2]*live, time.Duration, error) {
	var out [2]*live
	var errs [2]error
	began := time.Now()
	var wg sync.WaitGroup
	for v := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[v], errs[v] = g.startOne(ctx, v, serials[v])
		}()
	}
	wg.Wait()
	if err := cmp.Or(errs[0], errs[1]); err != nil {
		for _, l := range out {
			if l != nil {
				l.stop()
			}
		}
		return [2]*live{}, 0, err
	}
	return out, time.Since(began), nil
}

// start serves version v, checks every URL and warms the stack.
func (g *gate) start(ctx context.Context, v, serial int) (*live, error) {
	st, err := stack.Start(ctx, g.config(v))
	if err != nil {
		return nil, fmt.Errorf("%s: start: %w", g.ver[v].Label, err)
	}
	tg, err := load.ParseTarget(st.HTTPURL)
	if err != nil {
		st.Stop(context.Background())
		return nil, err
	}
	l := &live{st: st, serial: serial, target: tg, failed: map[int]string{}, urls: g.urls[v]}
	if g.first && g.o.LogIn != nil {
		if l.urls, err = g.o.LogIn(ctx, st.HTTPURL); err != nil {
			l.stop()
			return nil, fmt.Errorf("%s: %w", g.ver[v].Label, err)
		}
	}
	if err := g.check(ctx, v, l); err != nil {
		l.stop()
		return nil, err
	}
	if err := g.warm(ctx, l); err != nil {
		l.stop()
		return nil, fmt.Errorf("%s: warm-up: %w", g.ver[v].Label, err)
	}
	// Each version's workers one to each CPU in turn: a CPU that a neighbour slows (a host's other guest, cache
	// or memory traffic) then slows both versions' trials alike. Left to the kernel, a version's workers may sit
	// on the slowed CPU for a trial or a round, which read as that version's CPU a request up by 10 to 40% in one
	// round of ten; spread, the A/A rounds of the demo's computing pages varied by 0.7 to 1.5% against 1.2 to 4.6%
	// (docs/ci.md, "Measured").
	if err := cpuset.Spread(l.st.PID(l.st.PHP()), g.cpus); err != nil {
		l.stop()
		return nil, fmt.Errorf("%s: %w", g.ver[v].Label, err)
	}
	return l, nil
}

// ok2xx is what a page must answer: a redirect or an error page is not the page whose cost is raced.
var ok2xx = func() []int {
	var s []int
	for c := 200; c < 300; c++ {
		s = append(s, c)
	}
	return s
}()

// options is a closed-loop run of mix on l: n requests, every connection whole cycles of the mix (Even), so
// that every trial of a comparison serves the same requests.
func (g *gate) options(l *live, mix []load.MixItem, n int) load.Options {
	return load.Options{Target: l.target, Request: g.o.Request, Connections: g.conc, Requests: int64(n), Even: true,
		Timeout: g.o.Timeout, Mix: mix, SkipPreflight: true, ExpectStatus: ok2xx}
}

// check sends every URL once to version v's stack l: a page that fails (its status, its marker, no answer) is
// the run's error, naming the version, the URL and PHP's own message, never a fast page. On the first pair an
// optional URL's failure is noted in l.failed instead, for begin to judge against the other version's.
func (g *gate) check(ctx context.Context, v int, l *live) error {
	for i, u := range l.urls {
		o := g.options(l, []load.MixItem{u}, 1)
		o.Connections, o.Even = 1, false
		r, err := load.NewRunner(o)
		if err != nil {
			return err
		}
		res, err := r.Trial(ctx, 0, 0)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err == nil && res != nil && res.Errors == 0 {
			continue
		}
		why := g.broken(v, l, u, res, err)
		if !g.first || !u.Optional || errors.Is(err, context.Canceled) {
			return why
		}
		l.failed[i] = why.Error()
	}
	return nil
}

// broken says how URL u failed on version v's stack l, on one line.
func (g *gate) broken(v int, l *live, u load.MixItem, res *load.Result, err error) error {
	why := ""
	if res != nil {
		for class, sample := range res.ErrorSamples {
			why = class + ": " + sample
		}
	}
	if why == "" && err != nil {
		why = err.Error()
	}
	if errors.Is(err, load.ErrNoAnswer) || res != nil && res.ErrorsByClass[load.ClassTimeout] > 0 {
		why += fmt.Sprintf(" (no answer within --timeout %s)", g.o.Timeout)
	}
	if msg := phpMessage(l.st); msg != "" {
		// The served copy goes with the stack: name the file as it is in the version.
		why += "; PHP says: " + strings.ReplaceAll(msg, l.st.Docroot+"/", "")
	}
	method := cmp.Or(u.RequestOver(g.o.Request).Method, "GET")
	return fmt.Errorf("%s %s fails in %s (%s): %s", method, u.URI, g.ver[v].Label, where(g.ver[v]), oneLine(why))
}

// warmRounds is how many cycles of the mix each connection sends to a fresh stack before its first trial:
// opcache compiles a script on its first request, and a worker's first requests cost more than its later ones.
const warmRounds = 2

// warm sends every URL that passed l's check to every worker of l a few times.
func (g *gate) warm(ctx context.Context, l *live) error {
	var urls []load.MixItem
	for i, u := range l.urls {
		if _, bad := l.failed[i]; !bad {
			urls = append(urls, u)
		}
	}
	if len(urls) == 0 {
		return nil // begin says so
	}
	r, err := load.NewRunner(g.options(l, urls, g.conc*cycle(urls)*warmRounds))
	if err != nil {
		return err
	}
	res, err := r.Trial(ctx, 0, 0)
	if err != nil {
		return err
	}
	if res.Errors > 0 {
		return fmt.Errorf("%d of %d requests failed", res.Errors, res.Requests)
	}
	return nil
}

// cycle is the requests of one cycle of mix, as the load generator spreads it.
func cycle(mix []load.MixItem) int { return len(load.MixSequence(mix)) }

// phpMessage is the last PHP message nginx logged from FastCGI stderr (a fatal error, a warning), as tune
// reports it.
func phpMessage(st *stack.Stack) string {
	text := st.LogTail(st.ErrorLog(), 20)
	line := ""
	for _, l := range strings.Split(text, "\n") {
		if i := strings.Index(l, "PHP message: "); i >= 0 {
			msg := l[i+len("PHP message: "):]
			if j := strings.Index(msg, "\" while reading"); j >= 0 {
				msg = msg[:j]
			}
			line = msg
		}
	}
	return strings.TrimSpace(line)
}

// oneLine keeps s on one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
