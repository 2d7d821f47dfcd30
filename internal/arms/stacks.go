package arms

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/experiment"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/measure"
	"github.com/phptune/phptune/internal/stack"
)

// stacks serves configurations from warm nginx + php-fpm stacks, shared by the arms that use one and stopped once
// none does (the tuner holds the best so far, so it stays warm between knobs). The arms of an experiment each
// have stacks of their own (Stacks: see replicas.go); warm has one stack a configuration for the others to
// share.
type stackSet struct {
	o       Config
	lengths *Lengths
	mu      sync.Mutex // guards warm, all, held, the counters and each Stack's refs: arms start side by side
	warm    map[string]*Stack
	all     map[*Stack]bool // every stack not yet released, warm's and the replicas' of their own
	held    *Stack          // the one the tuner holds
	serial  int             // stacks started so far
	record  func(TrialRecord)
	warn    func(string)
	// settleWall and startWall are what settling and starting (settling included) took, for the plan.
	starts                int
	startWall, settleWall time.Duration
	// checked: the run's first check is done (it alone logs in, measures memory and drops optional URLs).
	checked bool
	// slowOnce reports the first URL check that needed a second try, stallOnce the first empty goodput window.
	slowOnce, stallOnce sync.Once
	// oom counts the OOM killer's kills in the cgroup the stacks run in (nil: none to read).
	oom     *oomWatch
	oomOnce sync.Once // the warning of an OOM kill during a trial, once
	kills0  int64     // the OOM killer's count before the run's first stack
	// gate keeps starts that would not fit the memory limit together from running side by side.
	gate startGate
	// pins says, by phase, how each duet experiment's arms were pinned (Plan.DuetPin).
	pins map[string]string
}

// Lengths are the trials' lengths, fitted once the app's speed is known: a goodput trial's warm-up and window,
// the requests of a CPU trial.
type Lengths struct {
	Warm, Win   time.Duration
	CPURequests int
	// SplitRequests are the requests of a split round's duet trial (capacityTrial).
	SplitRequests int
}

// Config is what the stacks serve and how a stack is checked: the app, the URLs and how they are sent, and how
// duet arms share the CPUs.
type Config struct {
	Stack   stack.Config // the app and the binaries; each configuration applies its pools, nginx and keep-alive
	URLs    []load.MixItem
	Request load.Request
	Timeout time.Duration
	// LogIn, when set, is sent once on the first stack before the URLs are checked; the URLs it returns (with
	// the session's cookies) are the run's.
	LogIn func(ctx context.Context, base string) ([]load.MixItem, error)
	// DuetPin pins each duet arm's stack to a share of the CPUs of its own, the shares rotating round by round;
	// DuetSpread spreads a duet arm's php-fpm workers over the CPUs where they are not pinned apart.
	DuetPin, DuetSpread bool
}

// Stack is a configuration served: its stack, its PHP pool and what its check found; the fields are set once it
// has started and read only after.
type Stack struct {
	Config knob.Config
	Server *stack.Stack
	Pool   stack.Endpoint
	// MaxResponse is the largest response of the check, headers included; CheckLatency the check's mean
	// latency, seconds; URLMemory, by URL, PHP's peak memory for one request of it (php-fpm's "last request
	// memory": 0 unknown), on the run's first stack only.
	MaxResponse  int64
	CheckLatency float64
	URLMemory    []int64
	serial       int // its number among the run's stacks, from 1
	refs         int
	arms         int    // the replicated arms using it (an experiment's arm never shares its stack with another)
	note         string // what a knob's check said of it
	// ready is closed once the stack is started, checked and settled, or failed (err): an arm of the same
	// configuration that asks meanwhile waits for it.
	ready chan struct{}
	err   error
	// queue is the time a request waits at the trials' concurrency (Little's law: connections / throughput) as
	// last seen: a trial's warm-up and window must outlast it, or a slow pool under many connections completes
	// nothing in a short window and reads as dead.
	queue time.Duration
	// served: a goodput window of this stack (or of the one an arm's trials ran on before it) completed a request,
	// so that the queue is known and a window twice as long that completes nothing is a stall of the app's own.
	served bool
	// kills is the OOM killer's count when its trial began (a stack runs one trial at a time).
	kills int64
	// cpus is the CPU share it is pinned to for a duet round's trial ("": not pinned; pin.go).
	cpus string
}

// died says that w is up and one of its server processes has exited.
func (w *Stack) died() bool {
	select {
	case <-w.ready:
		return w.err == nil && w.Server != nil && w.Server.Died() != nil
	default:
		return false
	}
}

func newStackSet(o Config, l *Lengths, record func(TrialRecord), warn func(string)) *stackSet {
	s := &stackSet{o: o, lengths: l, warm: map[string]*Stack{}, all: map[*Stack]bool{}, record: record, warn: warn,
		oom: newOOMWatch()}
	s.kills0 = s.oom.count()
	return s
}

// WarmOf is cfg's warm stack, or nil.
func (s *stackSet) WarmOf(cfg knob.Config) *Stack {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.warm[cfg.Key()]
}

// shared is an arm that runs cfg's trials on its warm stack, or its twin's (RunsOn).
func (s *stackSet) shared(cfg knob.Config, spec TrialSpec) experiment.Arm {
	return &stackArm{s: s, cfg: RunsOn(cfg, spec), spec: spec}
}

// RunsOn is the configuration an arm of cfg runs under spec: CPU trials on cpuPool's twin, steady goodput
// trials on steadyPool's, the rest on cfg itself.
func RunsOn(cfg knob.Config, spec TrialSpec) knob.Config {
	switch {
	case spec.Metric == MetricCPU:
		return cpuPool(cfg, spec.Conc)
	case spec.Steady:
		return SteadyPool(cfg)
	}
	return cfg
}

// SteadyPool is cfg with a static pool of its size: what a dynamic or ondemand pool is under steady load of
// as many connections or more. Interleaved trials leave each arm idle while the others run, and a dynamic pool
// kills spare workers when idle and forks fresh ones when loaded again: measured on the demo (two stacks
// alternating, 100 rounds of 0.3 s windows), a dynamic pool of 8 served 9% fewer requests than a static one at
// 9% more CPU a request (the new workers' first requests), and its log ratios varied by 7.5% against 4.0%.
// Steady traffic never sees that churn; a knob that does not shape the pool (transport, keep-alive, buffers)
// is measured without it.
func SteadyPool(cfg knob.Config) knob.Config {
	c := cfg.Clone()
	c.PM, c.StartServers, c.MinSpare, c.MaxSpare = "static", 0, 0, 0
	return c
}

// cpuPool is what a CPU trial of cfg at conc connections runs on: cfg with a static pool of a worker a
// connection, whatever cfg's size (the knee's, which moved from 1 to 8 between two runs of the demo; memory caps
// conc: poolSize). A CPU-only knob changes what a request costs a worker, not how many workers
// there are. A static pool is ready in well under a second, where a fresh dynamic one needs seconds of load to
// grow (php-fpm adds workers once a second: on the demo at a knee of 8 to 16 connections, settling a race's fresh
// dynamic stacks took 4 to 6 s, more than the race's rounds); and a worker's first requests cost more than its
// later ones (WordPress: about twice the CPU for its first few), so a pool no larger than the load is warm
// after a few requests each, where one of 32 workers under 4 connections was still warming after 8 rounds.
func cpuPool(cfg knob.Config, conc int) knob.Config {
	c := cfg.Clone()
	c.PM, c.StartServers, c.MinSpare, c.MaxSpare = "static", 0, 0, 0
	if conc > 0 {
		c.MaxChildren = conc
	}
	return c
}

type stackArm struct {
	s    *stackSet
	cfg  knob.Config
	spec TrialSpec
	w    *Stack
}

func (a *stackArm) Name() string { return a.cfg.String() }

func (a *stackArm) Cold() bool {
	a.s.mu.Lock()
	defer a.s.mu.Unlock()
	return a.w == nil && a.s.warm[a.cfg.Key()] == nil
}

func (a *stackArm) Start(ctx context.Context) error {
	if a.w != nil {
		return nil
	}
	w, err := a.s.acquire(ctx, a.cfg, a.spec, share)
	if err != nil {
		return err
	}
	a.w = w
	return nil
}

func (a *stackArm) Trial(ctx context.Context) (experiment.Observation, error) {
	if a.w == nil {
		return experiment.Observation{}, errors.New("arm not started")
	}
	return a.s.trial(ctx, a.spec, a.w)
}

func (a *stackArm) Stop() {
	if a.w != nil {
		a.s.release(a.w, share)
		a.w = nil
	}
}

// How acquire finds a stack.
type use int

const (
	share use = iota // cfg's warm stack, whoever uses it
	own              // cfg's warm stack when no replicated arm uses it, else a fresh one, for one arm alone
	fresh            // a fresh one, for one arm alone
)

// acquire gives a reference to a stack of cfg as u asks, starting, checking and settling it first when there is
// none to take; safe to call from several goroutines (a race starts its arms side by side). A fresh stack is
// cfg's warm one when it has none, so that the tuner can hold it.
func (s *stackSet) acquire(ctx context.Context, cfg knob.Config, spec TrialSpec, u use) (*Stack, error) {
	key := cfg.Key()
	s.mu.Lock()
	var dead *Stack
	if w := s.warm[key]; w != nil && w.died() {
		// Killed while idle (held as the best so far): started afresh, and what is left of it stopped now, since
		// no holder finds it by its key any more (the tuner's hold moves to the fresh stack).
		delete(s.warm, key)
		s.warn(fmt.Sprintf("%s: %v while idle; started again", key, w.Server.Died()))
		dead = w
	}
	if w := s.warm[key]; w != nil && (u == share || u == own && w.arms == 0) {
		w.refs++
		if u != share {
			w.arms++
		}
		s.mu.Unlock()
		select {
		case <-w.ready:
		case <-ctx.Done():
			s.release(w, u)
			return nil, ctx.Err()
		}
		if w.err != nil {
			return nil, w.err
		}
		return w, nil
	}
	s.serial++
	w := &Stack{Config: cfg, serial: s.serial, refs: 1, ready: make(chan struct{})}
	if u != share {
		w.arms = 1
	}
	if dead != nil && dead == s.held {
		w.refs++ // the hold's
		s.held = w
	}
	if s.warm[key] == nil {
		s.warm[key] = w
	}
	s.all[w] = true
	if dead != nil {
		delete(s.all, dead)
	}
	s.mu.Unlock()
	if dead != nil {
		dead.Server.Stop(context.Background())
	}
	began := time.Now()
	err := s.startChecked(ctx, w, spec)
	s.mu.Lock()
	s.starts++
	s.startWall += time.Since(began)
	if err != nil {
		w.err = err
		if s.held == w {
			s.held = nil
		}
		delete(s.all, w)
		if s.warm[key] == w {
			delete(s.warm, key)
			s.rekey(key)
		}
	}
	s.mu.Unlock()
	close(w.ready)
	return w, err
}

// startChecked starts w's configuration and, when spec has a Check, starts it again until the check passes:
// where the loader puts php-fpm's text decides whether huge pages can hold any of it.
func (s *stackSet) startChecked(ctx context.Context, w *Stack, spec TrialSpec) error {
	leave, err := s.gate.enter(ctx, w.Config)
	if err != nil {
		return err
	}
	defer leave()
	for try := 1; ; try++ {
		err := s.start(ctx, w, spec)
		var cf checkFailed
		if !errors.As(err, &cf) {
			if err == nil && spec.Check != nil {
				w.note = fmt.Sprintf("%s; php-fpm start %d", w.note, try)
			}
			return err
		}
		if try == checkStarts {
			return fmt.Errorf("%w: %v in %d starts of php-fpm", ErrNotInEffect, cf.err, try)
		}
	}
}

// checkStarts is how often a configuration whose Check fails is started before it counts as not in effect.
const checkStarts = 6

// checkFailed is a TrialSpec's Check failing on a fresh start: startChecked starts it again.
type checkFailed struct{ err error }

func (e checkFailed) Error() string { return e.err.Error() }

// start serves w's configuration, checks that it took effect (spec's Check, as soon as PHP is up: where it
// fails, as a huge-pages start does one time in two here, the stack is stopped before its workers are waited for,
// its HTTP server started, its URLs checked and its pool warmed) and every URL, and settles the pool at spec's
// connections; on an error nothing of it is left running.
func (s *stackSet) start(ctx context.Context, w *Stack, spec TrialSpec) error {
	sc := s.o.Stack
	sc.FastStop = true // an arm stops between trials: nothing is in flight
	w.Config.Apply(&sc, "tune")
	var refused error // what spec's Check said against this start
	if spec.Check != nil {
		sc.CheckPHP = func(pid int) error {
			w.note, refused = spec.Check(pid)
			return refused
		}
	}
	st, err := stack.Start(ctx, sc)
	if exitcode.Of(err) == exitcode.Usage {
		return err // bad input says what to do in a line of its own, not under a configuration's name
	}
	if errors.Is(err, stack.ErrCheckPHP) {
		return checkFailed{refused}
	}
	if err != nil {
		return fmt.Errorf("start %s: %w", w.Config, err)
	}
	w.Server, w.Pool = st, phpPool(st, w.Config)
	if err := s.check(ctx, w); err != nil {
		st.Stop(context.Background())
		return err
	}
	settled := time.Now()
	if spec.Conc > 0 {
		o := s.LoadOptions(w, spec.Conc)
		if spec.Metric == MetricCPU {
			o.Requests = int64(s.lengths.CPURequests / cpuWarmShare)
		}
		if err := Settle(ctx, w.Pool, o, w.Config.MaxChildren); err != nil {
			st.Stop(context.Background())
			return fmt.Errorf("settle %s: %w", w.Config, err)
		}
	}
	s.mu.Lock()
	s.settleWall += time.Since(settled)
	s.mu.Unlock()
	return nil
}

// release lets go of a reference taken as u asked; the last one stops the stack.
func (s *stackSet) release(w *Stack, u use) {
	s.mu.Lock()
	w.refs--
	if u != share {
		w.arms--
	}
	last := w.refs <= 0
	if last {
		delete(s.all, w)
		if key := w.Config.Key(); s.warm[key] == w {
			delete(s.warm, key)
			s.rekey(key)
		}
	}
	s.mu.Unlock()
	if last && w.Server != nil {
		w.Server.Stop(context.Background())
	}
}

// rekey makes another running stack of key its warm one, the held one first: a replica that took over from the
// held stack in a race, and now stops, leaves the held one to be found. s.mu is held.
func (s *stackSet) rekey(key string) {
	if h := s.held; h != nil && h.Config.Key() == key {
		s.warm[key] = h
		return
	}
	for w := range s.all {
		if w.Config.Key() == key {
			s.warm[key] = w
			return
		}
	}
}

// succeed makes next, a replica taking over from prev, its configuration's warm stack where prev was (or none
// was), so that the tuner can hold it once the race is won.
func (s *stackSet) succeed(prev, next *Stack) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if key := next.Config.Key(); s.warm[key] == prev || s.warm[key] == nil {
		s.warm[key] = next
	}
}

// Hold keeps cfg's stack warm for the tuner (the best so far), letting go of the one held before.
func (s *stackSet) Hold(cfg knob.Config) {
	key := cfg.Key()
	s.mu.Lock()
	if s.held != nil && s.held.Config.Key() == key {
		s.mu.Unlock()
		return
	}
	w := s.warm[key] // nil when not running: it starts when an arm needs it
	if w != nil {
		w.refs++
	}
	old := s.held
	s.held = w
	s.mu.Unlock()
	if old != nil {
		s.release(old, share)
	}
}

// StopAll stops every stack, held or not.
func (s *stackSet) StopAll() {
	s.mu.Lock()
	all := s.all
	s.warm, s.all, s.held = map[string]*Stack{}, map[*Stack]bool{}, nil
	s.mu.Unlock()
	for w := range all {
		if w.Server != nil {
			w.Server.Stop(context.Background())
		}
	}
}

// check sends each URL once and turns what makes tuning pointless into a clear error that names the URL, with
// PHP's own message. The run's first check also logs in (once: the session outlives the stack, it is in the
// app's store), measures each URL's memory, and leaves out, with a warning, optional URLs (an access log's)
// that fail.
func (s *stackSet) check(ctx context.Context, w *Stack) error {
	s.mu.Lock()
	first := !s.checked
	s.checked = true
	s.mu.Unlock()
	if first && s.o.LogIn != nil {
		urls, err := s.o.LogIn(ctx, w.Server.HTTPURL)
		if err != nil {
			return err
		}
		s.o.URLs = urls
	}
	var latency float64
	var kept []load.MixItem
	for _, u := range s.o.URLs {
		res, err := s.checkOne(ctx, w, u, first)
		if err != nil {
			return err
		}
		if res.Errors == 0 {
			w.MaxResponse = max(w.MaxResponse, res.MaxBytes)
			latency += res.Latency.Mean / 1e6
			kept = append(kept, u)
			continue
		}
		why := s.whyFailed(w, u, res)
		if first && u.Optional {
			s.warn(fmt.Sprintf("%s is left out of the mix: %s", why, "it fails on the app as served here"))
			continue
		}
		return exitcode.UsageErrorf("%s: fix the app or leave the URL out before tuning", why)
	}
	if len(kept) == 0 {
		return exitcode.UsageErrorf("no URL of the mix answers on the app as served here (see the warnings): fix the app or give URLs that work")
	}
	if first {
		s.o.URLs = kept // before any other stack starts: the first check runs alone
	}
	w.CheckLatency = latency / float64(len(kept))
	return nil
}

// whyFailed says which URL failed how, with PHP's own message.
func (s *stackSet) whyFailed(w *Stack, u load.MixItem, res *load.Result) string {
	why := ""
	for c, sample := range res.ErrorSamples {
		why = c + ": " + sample
	}
	if msg := phpMessage(w.Server); msg != "" {
		why += "; PHP says: " + msg
	}
	method := cmp.Or(u.RequestOver(s.o.Request).Method, "GET")
	return fmt.Sprintf("%s %s fails under %s (%s)", method, u.URI, w.Config, why)
}

// checkTries is how often a URL that does not answer within --timeout is sent before the page counts as
// hanging: an app whose requests now and then all wait on one slow one (a lock, a cache stampede) answers the
// next try once the stall is over, and one slow answer is not a hanging page. (An app that held every request
// for 3 s once in about 400, tuned with --timeout 2s, ended a 3-minute run after 41 s when a fresh stack's
// check met one.)
const checkTries = 3

// checkOne sends u, again while it does not answer within --timeout, up to checkTries times in all; a URL that
// needed more than one try is reported once a run.
func (s *stackSet) checkOne(ctx context.Context, w *Stack, u load.MixItem, first bool) (*load.Result, error) {
	for try := 1; ; try++ {
		res, err := s.checkOnce(ctx, w, u, first)
		hung := errors.Is(err, load.ErrNoAnswer) || (err == nil && res != nil && res.ErrorsByClass[load.ClassTimeout] > 0)
		switch {
		case hung && try < checkTries && ctx.Err() == nil:
			continue
		case hung:
			if err != nil {
				err = fmt.Errorf("%w (%d tries, one after the other)", err, try)
			}
		case try > 1:
			s.slowOnce.Do(func() {
				s.warn(fmt.Sprintf("%s %s did not answer within --timeout %s when a stack started; it did when tried again: "+
					"the app stalls now and then, and its trials count the requests a stall fails", cmp.Or(u.RequestOver(s.o.Request).Method, "GET"),
					u.URI, s.o.Timeout))
			})
		}
		return res, err
	}
}

// checkOnce sends u once. On the run's first stack it also finds PHP's peak memory for the request: the pool's
// status page shows each worker's last request, so the worker that served u is the idle one whose request count
// rose and whose last request is not the status page. A GET is sent once first, unmeasured, so that its memory
// is not its first compilation's, and again (up to three times) when its worker went on to serve the status
// page.
func (s *stackSet) checkOnce(ctx context.Context, w *Stack, u load.MixItem, first bool) (*load.Result, error) {
	o := s.LoadOptions(w, 1)
	o.Mix, o.Requests, o.Duration, o.Warmup = []load.MixItem{u}, 1, 0, 0
	r, err := load.NewRunner(o)
	if err != nil {
		return nil, err
	}
	if err := r.Preflight(ctx); err != nil {
		return nil, err
	}
	get := o.RequestOf(0).Method == "GET"
	var before *measure.FPMStatus
	if first && !get {
		before = w.FPMStatus(ctx) // sent once only: a form is not sent twice
	}
	res, err := r.Trial(ctx, 0, 0)
	if err != nil || res.Errors > 0 || !first {
		return res, err
	}
	if !get {
		w.URLMemory = append(w.URLMemory, s.memoryAfter(ctx, w, before, u.URI))
		return res, nil
	}
	for try := 0; ; try++ {
		before := w.FPMStatus(ctx)
		if before == nil {
			w.URLMemory = append(w.URLMemory, 0) // no status page: not to be told
			return res, nil
		}
		if res, err = r.Trial(ctx, 0, 0); err != nil || res.Errors > 0 {
			return res, err
		}
		if m := s.memoryAfter(ctx, w, before, u.URI); m > 0 || try == 2 {
			w.URLMemory = append(w.URLMemory, m)
			return res, nil
		}
	}
}

// servedURI says whether a worker's last request (php-fpm shows SCRIPT_NAME and the query, "-" once a status
// request is done) can be uri's.
func servedURI(last, statusPath, uri string) bool {
	if last == "-" || strings.HasPrefix(last, statusPath) {
		return false
	}
	_, q1, _ := strings.Cut(last, "?")
	_, q2, _ := strings.Cut(uri, "?")
	return q1 == q2
}

// memoryAfter is servedMemory, asked again while the worker is finishing (up to about half a second).
func (s *stackSet) memoryAfter(ctx context.Context, w *Stack, before *measure.FPMStatus, uri string) int64 {
	for i := 0; ; i++ {
		m, finishing := servedMemory(before, w.FPMStatus(ctx), w.Pool.StatusPath, uri)
		if !finishing || i == 20 || ctx.Err() != nil {
			return m
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// FPMStatus is php-fpm's status page of w's pool, nil when it does not answer within 2 seconds.
func (w *Stack) FPMStatus(ctx context.Context) *measure.FPMStatus {
	sc, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	st, _ := measure.ReadFPMStatus(sc, w.Pool.Network, w.Pool.Address, w.Pool.StatusPath)
	return st
}

// servedMemory is the last request memory of the worker that served one request between before and after (0:
// not to be told); finishing says that worker is still finishing the request (freeing its memory after the
// response went out), when its figure is not shown yet.
func servedMemory(before, after *measure.FPMStatus, statusPath, uri string) (mem int64, finishing bool) {
	if before == nil || after == nil {
		return 0, false
	}
	count := map[int]int64{}
	for _, p := range before.Processes {
		count[p.PID] = p.Requests
	}
	for _, p := range after.Processes {
		if p.Requests <= count[p.PID] || !servedURI(p.RequestURI, statusPath, uri) {
			continue
		}
		switch p.State {
		case "Idle":
			return p.LastRequestMemory, false
		case "Finishing":
			finishing = true
		}
	}
	return 0, finishing
}

// phpMessage is the last PHP message nginx logged from FastCGI stderr (a fatal error, a warning).
func phpMessage(st *stack.Stack) string {
	line := st.LogTail(st.ErrorLog(), 20)
	for _, l := range strings.Split(line, "\n") {
		if i := strings.Index(l, "PHP message: "); i >= 0 {
			msg := l[i+len("PHP message: "):]
			if j := strings.Index(msg, "\" while reading"); j >= 0 {
				msg = msg[:j]
			}
			line = msg
		} else if i := strings.Index(l, "] PHP "); i >= 0 && strings.Contains(l, "[php:") {
			line = l[i+2:] // mod_php's, in Apache's error log
		}
	}
	if !strings.Contains(line, "PHP") {
		return ""
	}
	return strings.TrimSpace(line)
}

// LoadOptions are the options of a trial of the mix on w at conc connections, of the trials' lengths.
func (s *stackSet) LoadOptions(w *Stack, conc int) load.Options {
	tg, _ := load.ParseTarget(w.Server.HTTPURL)
	// Only 2xx counts: a redirect is an error here, since tuning the redirect is not tuning the page.
	return load.Options{Target: tg, Request: s.o.Request, Connections: conc, Duration: s.lengths.Win, Warmup: s.lengths.Warm,
		Timeout: s.o.Timeout, Mix: s.o.URLs, SkipPreflight: true, ExpectStatus: ok2xx}
}

var ok2xx = func() []int {
	var v []int
	for c := 200; c < 300; c++ {
		v = append(v, c)
	}
	return v
}()

// warmConns is the most connections a static pool is warmed with.
const warmConns = 16

// warmPerWorker is the requests each worker of a static pool serves at the least before it is measured: a
// worker's first requests cost more than its later ones (WordPress's first few about twice the CPU).
const warmPerWorker = 4

// cpuWarmShare: a CPU trial's stack is warmed with a sixth of the trial's requests (warmPerWorker a worker at
// the least), not with warmStep's load. A CPU trial has no warm-up of its own, so this is all its stack gets; and
// a duet round starts the next round's stacks beside its trials, where the step's 0.4 s of load a stack took a
// third of the machine's CPU (the demo, 2026-11-29: 170 requests a stack; its JIT's cost a request steady after
// about 70 requests of a fresh pool's). Warmed so, a duet trial of the demo served 185 requests a second where it
// served 145, and a round took 2.4 s where it took 3.2 (docs/engine.md, "A round's length").
const cpuWarmShare = 6

// warmStep is the step of load a static pool gets first when its warm-up is not counted in requests.
const warmStep = 400 * time.Millisecond

// MaxSettle bounds Settle: php-fpm doubles a dynamic pool's spawn rate each second up to 32 a second, so a
// pool of up to 64 workers reaches its size in about 6 s of steady load.
const MaxSettle = 8 * time.Second

// settleStep is one step of Settle's load: long enough for php-fpm's once-a-second pool maintenance to see it.
const settleStep = time.Second

// Settle brings a fresh pool to its steady state under o's load before it is measured. A pm=dynamic or
// ondemand pool starts with a few workers and php-fpm adds them at most once a second; a trial's short warm-up
// does not cover that, so a fresh arm would lose against one that had served for a while (on the demo,
// preload came out worse in every run for this reason alone). A static pool has its workers, but its opcache
// and JIT buffer start empty: it gets o.Requests requests where they are set (a CPU trial's stack), else a
// short step of load (two demo runs disagreed on pm static vs dynamic, -5.4% and +5.1%, when static arms went
// in cold), then warmPerWorker requests a worker.
func Settle(ctx context.Context, pool stack.Endpoint, o load.Options, maxChildren int) error {
	o.Warmup = 0
	if pool.PM == "static" {
		return warmStatic(ctx, o, maxChildren)
	}
	o.Duration, o.Requests = settleStep, 0
	prev := -1
	for end := time.Now().Add(MaxSettle); time.Now().Before(end); {
		if _, err := Unmeasured(ctx, o); err != nil {
			return err
		}
		sc, cancel := context.WithTimeout(ctx, 2*time.Second)
		st, err := measure.ReadFPMStatus(sc, pool.Network, pool.Address, pool.StatusPath)
		cancel()
		if err != nil || st.TotalProcesses >= maxChildren || st.TotalProcesses <= prev {
			return ctx.Err()
		}
		prev = st.TotalProcesses
	}
	return ctx.Err()
}

// warmStatic sends a static pool every URL a few times, which fills opcache and warms the JIT's counters (o's
// requests where set, else warmStep's load), then enough requests that every worker has served warmPerWorker
// (a slow app's first requests in a worker cost more than its later ones: without this, the demo's sweep
// measured 71, 115 and 144 req/s in its first three trials at one connection, as its 128 workers took their
// first turns).
func warmStatic(ctx context.Context, o load.Options, workers int) error {
	if o.Requests == 0 {
		o.Duration = warmStep
	}
	res, err := Unmeasured(ctx, o)
	if err != nil {
		return err
	}
	served := int64(0)
	if res != nil {
		served = res.Requests
	}
	if need := int64(warmPerWorker*workers) - served; need > 0 && ctx.Err() == nil {
		// Every worker takes its turn (they wait in accept, the longest-waiting first), at any load.
		// Many connections warm an app that waits as fast as a few warm one that computes.
		o.Duration, o.Requests, o.Connections = 0, need, max(o.Connections, min(workers, warmConns))
		if _, err := Unmeasured(ctx, o); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// Unmeasured runs one trial of load that is not a measurement: a trial that completed no request is no error.
func Unmeasured(ctx context.Context, o load.Options) (*load.Result, error) {
	r, err := load.NewRunner(o)
	if err != nil {
		return nil, err
	}
	res, err := r.Trial(ctx, 0, 0)
	if err != nil && !errors.Is(err, load.ErrNoRequests) {
		return nil, err
	}
	return res, nil
}
