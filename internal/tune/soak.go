package tune

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/arms"
	"github.com/phptune/phptune/internal/bytesize"
	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/measure"
)

// Memory over hours (DESIGN 9). No trial measures what pm.max_requests is for: a worker that grows from request
// to request (an extension's leak, a cache that fills) until the pool no longer fits its memory. The soak
// serves the mix on a static pool of the size chosen from the knee, for a tenth of the budget (or --soak; none
// under SoakBudget), and reads each worker's private memory (USS) and its own count of requests between steps
// of load: growth per request, with its interval, from measure.EstimateGrowth. When the mix grows, each URL is
// sent alone to a pool of one worker, to name the page that leaks. pm.max_requests is then the requests after
// which a worker reaches the memory the pool was sized with, and the pool's memory bound counts a worker at
// what it grows to by then.

// ParseSoak reads --soak into Options.Soak: a duration, or off (-1); "" is 0, the budget's own (soakTime).
func ParseSoak(s string) (time.Duration, error) {
	switch s {
	case "":
		return 0, nil
	case "off":
		return -1, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return d, nil
	}
	return 0, exitcode.UsageErrorf("--soak %q: want a duration such as 2m, or off", s)
}

// Soak is what the soak measured and what it recommends.
type Soak struct {
	Config      string  `json:"config"` // the configuration soaked (a static pool, never recycled)
	Workers     int     `json:"workers"`
	Connections int     `json:"connections"`
	Seconds     float64 `json:"seconds"`  // the mix's load, reads excluded
	Requests    int64   `json:"requests"` // of the mix, served in the soak
	RPS         float64 `json:"rps"`      // the rate the mix was served at
	// Growth is the workers' growth per request over the mix, Series the reads it is from (a worker's first
	// requests left out).
	Growth measure.Growth         `json:"growth"`
	Series []measure.WorkerSeries `json:"series"`
	// StartBytes is a fresh worker's private memory between requests (the workers' first reads, less their
	// growth since their start); SizedBytes the per-worker memory the pool was sized with.
	StartBytes int64 `json:"start_bytes"`
	SizedBytes int64 `json:"sized_bytes"`
	// MaxRequests is the pm.max_requests the growth calls for (0: none), GrownBytes what a worker reaches by then
	// at the growth's upper bound.
	MaxRequests int   `json:"max_requests"`
	GrownBytes  int64 `json:"grown_bytes,omitempty"`
	// Day is a worker after a day at each rate known, never recycled: only when growth was shown (an interval
	// that holds zero says nothing to project).
	Day []DayAt `json:"day,omitempty"`
	// URLs are the pages sent alone, each to a pool of one worker, when the mix grew.
	URLs []URLGrowth `json:"urls,omitempty"`
	// Stopped says why the soak ended before its time ("" when it did not).
	Stopped string `json:"stopped,omitempty"`
	Note    string `json:"note"`
}

// DayAt is a worker after a day of requests at a rate.
type DayAt struct {
	Rate float64 `json:"rate"`
	// From says where the rate is from: "measured" (the soak's own throughput, at the knee's load).
	From     string `json:"from"`
	Requests int64  `json:"requests_a_worker"`
	// Bytes is its private memory then at the growth's estimate, MaxBytes at the interval's upper end.
	Bytes    int64 `json:"bytes"`
	MaxBytes int64 `json:"max_bytes"`
}

// URLGrowth is one page's growth per request, served alone on a worker of its own.
type URLGrowth struct {
	Path     string             `json:"path"`
	Method   string             `json:"method,omitempty"`
	Requests int64              `json:"requests"`
	Growth   measure.Growth     `json:"growth"`
	Points   []measure.MemPoint `json:"points"`
}

// Leaks says whether the page is shown to grow a worker.
func (u URLGrowth) Leaks() bool { return u.Growth.Shown }

const (
	// soakShare is the budget's share the soak takes unless --soak says how long: enough for thousands of
	// requests on most apps (the demo serves about 500 a second here), little enough that the knob races keep
	// most of the budget.
	soakShare = 10
	minSoak   = 3 * time.Second
	// soakReads is how many reads the mix's soak aims at: its steps of load grow from minSoakStep (a page that
	// leaks fast meets the guard within a step) by a tenth of the time gone, to a soakReads-th of the soak (a
	// soak of an hour is read about a hundred times).
	soakReads   = 30
	minSoakStep = 200 * time.Millisecond
	// SoakWarm leaves out a worker's first requests: its caches fill (realpath, compiled regular expressions).
	SoakWarm = 20
	// minMaxRequests is the fewest requests recommended: a restart costs a fork and the new worker's first
	// requests' extra work (WordPress: about twice the CPU for its first few), a few percent at a hundred; a
	// worker that outgrows its memory sooner has a leak to fix, and the pool is sized for what it grows to.
	minMaxRequests = 100
	// attributeURLs is the most pages sent alone, the most weighted first.
	attributeURLs = 16
	// urlReads is how many reads a page sent alone aims at in its share of the time; urlGrowthCap stops it once
	// its worker has grown by that much.
	urlReads     = 12
	urlGrowthCap = 256 << 20
	// soakGuardMax bounds the pool's growth in the soak (less with less --memory): a page that leaks fast is
	// shown long before.
	soakGuardMax = 1 << 30
)

// soakTime is the soak's time: --soak, or a tenth of a budget of SoakBudget or more when the soak speaks to a knob
// of this run (max_requests, not left out by --only or --skip nor raced on values --knob names); 0 when off.
func (t *tuner) soakTime() time.Duration {
	switch {
	case t.o.Soak < 0:
		return 0
	case t.o.Soak > 0:
		return t.o.Soak
	case !slices.ContainsFunc(t.o.Knobs, func(k knob.Knob) bool { return k.Soak }), t.o.Budget < SoakBudget:
		return 0
	}
	return max(t.o.Budget/soakShare, minSoak)
}

// SoakBudget is the least budget whose own soak runs unless --soak says how long: a 3-minute demo's 18 s showed no
// growth in any run and were 5 to 7 rounds its CPU races lacked (validate_timestamps and huge_code_pages need 9 to
// 14 each at a round's 1 to 1.5%; 2026-11-29).
const SoakBudget = 5 * time.Minute

// soak measures the workers' memory over a long series of requests, names the pages that grow it, and sizes
// pm.max_requests and the pool's memory bound from that. A soak that cannot run is a warning, not the run's
// end: the starting max_requests is kept.
func (t *tuner) soak(ctx context.Context) error {
	d := t.soakTime()
	if d <= 0 || t.stacks == nil {
		if t.o.Soak == 0 && t.o.Budget < SoakBudget {
			// Said with the races the budget is too short for: a larger one soaks.
			t.soakRowAs(nil, StateNotRaced, notRacedWords, fmt.Sprintf("a budget under %s cannot spare the time for a "+
				"soak (--soak DURATION runs one on top of it); the starting value is kept", SoakBudget))
			return nil
		}
		t.soakRow(nil, "--soak off; the starting value is kept")
		return nil
	}
	sk := &Soak{}
	t.log.soak = sk
	err := t.soakMix(ctx, sk, d*2/3)
	if err == nil && sk.Growth.Shown {
		if len(t.o.URLs) == 1 {
			u := t.o.URLs[0]
			sk.URLs = []URLGrowth{{Path: u.URI, Method: methodOf(u, t.o.Request), Requests: sk.Requests, Growth: sk.Growth}}
		} else {
			err = t.attribute(ctx, sk, d/3)
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		t.warn("the soak (memory over a long series of requests) stopped: " + err.Error())
		sk.Stopped = cmp.Or(sk.Stopped, err.Error())
	}
	t.soakSizing(sk)
	return nil
}

func methodOf(u load.MixItem, base load.Request) string {
	if m := u.RequestOver(base).Method; m != "GET" {
		return m
	}
	return ""
}

// soakMix serves the mix on a static pool of the chosen size for d once it is started, reading the workers
// between steps.
func (t *tuner) soakMix(ctx context.Context, sk *Soak, d time.Duration) error {
	cfg := arms.SteadyPool(t.best)
	cfg.MaxRequests = 0
	sk.Config, sk.Workers, sk.Connections = cfg.String(), cfg.MaxChildren, t.conc
	t.status("soak", fmt.Sprintf("memory of %d workers over the mix", cfg.MaxChildren))
	w, err := t.stacks.Acquire(ctx, cfg, arms.TrialSpec{Phase: "soak", Metric: MetricGoodput, Conc: t.conc})
	if err != nil {
		return err
	}
	defer t.stacks.Release(w)
	began := t.clock.Now()
	end := began.Add(d)
	o := t.stacks.LoadOptions(w, t.conc)
	o.Warmup = 0
	rd := newWorkerReader(w.Pool.StatusPath)
	rd.tracker.Warm = SoakWarm
	guard := int64(soakGuardMax)
	if t.o.Memory > 0 {
		guard = min(guard, t.o.Memory/4)
	}
	defer func() { sk.Series, sk.Growth = rd.tracker.Series, measure.EstimateGrowth(rd.tracker.Series) }()
	for steps := 1; t.clock.Now().Before(end); steps++ {
		o.Duration = clampDur(t.clock.Now().Sub(began)/10, minSoakStep, max(d/soakReads, minSoakStep))
		res, err := arms.Unmeasured(ctx, o)
		if err != nil {
			return err
		}
		if res != nil {
			sk.Requests += res.Requests
			sk.Seconds += res.DurationS
		}
		if sk.Seconds > 0 {
			sk.RPS = float64(sk.Requests) / sk.Seconds
		}
		if err := w.Server.Died(); err != nil {
			return fmt.Errorf("%s: %w", cfg, err)
		}
		if err := rd.read(ctx, t.stacks, w); err != nil {
			return err
		}
		if grown := rd.grown(); grown > guard {
			sk.Stopped = fmt.Sprintf("the workers had grown by %s in all, the most the soak lets them (a quarter of the memory "+
				"the pool may use, 1 GiB at most)", bytesize.Format(float64(grown)))
			return nil
		}
		// A growth already measured to a tenth of itself either way is known well enough for max_requests.
		if g := measure.EstimateGrowth(rd.tracker.Series); steps >= soakReads/3 && g.Shown && g.Hi-g.Lo < 0.2*g.PerRequest {
			sk.Stopped = "growth measured to within a tenth either way"
			return nil
		}
	}
	return nil
}

// workerReader reads a pool's workers between steps of load: their counts of requests from php-fpm's status
// page, less the status reads each served, and their private memory from /proc.
type workerReader struct {
	statusPath string
	tracker    measure.SeriesTracker
	served     map[int]int64 // status reads each worker served
	first      map[int]int64 // each worker's first USS read
	last       map[int]int64 // and its last
}

func newWorkerReader(statusPath string) *workerReader {
	return &workerReader{statusPath: statusPath, served: map[int]int64{}, first: map[int]int64{}, last: map[int]int64{}}
}

// statusWaits is how often a read asks php-fpm's status again while workers are still finishing requests.
const statusWaits = 5

// read takes one read of every idle worker (one that is serving or finishing a request holds its memory). The
// worker that serves the status page is read from the next status read, which another worker serves.
func (r *workerReader) read(ctx context.Context, s *arms.Stacks, w *arms.Stack) error {
	seen := map[int]bool{}
	for pass := 0; pass < 2; pass++ {
		st, err := r.status(ctx, s, w)
		if err != nil {
			return err
		}
		if !r.take(st, seen, ussOf) {
			return nil
		}
	}
	return nil
}

// take records the idle workers of st not seen yet, each at its count less the status reads it served, and
// says whether the worker serving this read is left to read.
func (r *workerReader) take(st *measure.FPMStatus, seen map[int]bool, uss func(pid int) (int64, error)) (left bool) {
	for _, p := range st.Processes {
		if r.statusRead(p) {
			r.served[p.PID]++ // this read: the worker's count has it, or will
			left = left || !seen[p.PID]
			continue
		}
		if p.State != "Idle" || seen[p.PID] {
			continue
		}
		seen[p.PID] = true
		if m, err := uss(p.PID); err == nil { // else gone since
			r.add(p.PID, p.Requests-r.served[p.PID], m)
		}
	}
	return left
}

func ussOf(pid int) (int64, error) {
	ps, err := measure.ReadProc(pid)
	return ps.USS, err
}

// status reads php-fpm's status once no worker but the one serving it is busy, or after statusWaits tries.
func (r *workerReader) status(ctx context.Context, s *arms.Stacks, w *arms.Stack) (*measure.FPMStatus, error) {
	for i := 0; ; i++ {
		st := w.FPMStatus(ctx)
		if st == nil {
			return nil, errors.New("php-fpm's status page did not answer")
		}
		if !r.busy(st) || i == statusWaits-1 || ctx.Err() != nil {
			return st, nil
		}
		time.Sleep(30 * time.Millisecond)
	}
}

func (r *workerReader) add(pid int, requests, uss int64) {
	if _, ok := r.first[pid]; !ok {
		r.first[pid] = uss
	}
	r.last[pid] = uss
	r.tracker.Add(pid, requests, uss)
}

func (r *workerReader) statusRead(p measure.FPMProcess) bool {
	return p.State != "Idle" && strings.HasPrefix(p.RequestURI, r.statusPath)
}

// busy says whether a worker other than the status page's is serving or finishing a request.
func (r *workerReader) busy(st *measure.FPMStatus) bool {
	for _, p := range st.Processes {
		if (p.State == "Running" || p.State == "Finishing") && !r.statusRead(p) {
			return true
		}
	}
	return false
}

// grown is the workers' growth since their first reads, summed.
func (r *workerReader) grown() int64 {
	var g int64
	for pid, m := range r.last {
		g += max(m-r.first[pid], 0)
	}
	return g
}

// attribute sends each page alone to a pool of one worker for d once it is started, in equal shares of the
// time, to name the pages that grow a worker.
func (t *tuner) attribute(ctx context.Context, sk *Soak, d time.Duration) error {
	cfg := arms.SteadyPool(t.best)
	cfg.MaxChildren, cfg.MaxRequests, cfg.Keepalive = 1, 0, false
	w, err := t.stacks.Acquire(ctx, cfg, arms.TrialSpec{Phase: "soak", Metric: MetricGoodput, Conc: 1})
	if err != nil {
		return err
	}
	defer func() {
		if w != nil {
			t.stacks.Release(w)
		}
	}()
	end := t.clock.Now().Add(d)
	urls := slices.Clone(t.o.URLs)
	slices.SortStableFunc(urls, func(a, b load.MixItem) int { return b.Weight - a.Weight })
	if len(urls) > attributeURLs {
		sk.Note = fmt.Sprintf("the %d most weighted pages of %d were sent alone", attributeURLs, len(urls))
		urls = urls[:attributeURLs]
	}
	for i, u := range urls {
		t.status("soak", fmt.Sprintf("memory of one worker serving %s alone", u.URI))
		part := end.Sub(t.clock.Now()) / time.Duration(len(urls)-i)
		ug, err := t.urlGrowth(ctx, w, u, t.clock.Now().Add(max(part, minSoakStep)))
		if err != nil {
			return err
		}
		sk.URLs = append(sk.URLs, ug)
		if ug.Growth.Shown && len(urls)-i > 1 {
			// What it leaked stays in the worker: the next page starts on a fresh one.
			t.stacks.Release(w)
			if w, err = t.stacks.Acquire(ctx, cfg, arms.TrialSpec{Phase: "soak", Metric: MetricGoodput, Conc: 1}); err != nil {
				w = nil
				return err
			}
		}
	}
	return nil
}

// urlGrowth sends u to w's one worker in steps (one request, then doubling to about a twelfth of the time each)
// and reads the worker's private memory after each.
func (t *tuner) urlGrowth(ctx context.Context, w *arms.Stack, u load.MixItem, end time.Time) (URLGrowth, error) {
	ug := URLGrowth{Path: u.URI, Method: methodOf(u, t.o.Request)}
	o := t.stacks.LoadOptions(w, 1)
	o.Mix, o.Warmup, o.Duration = []load.MixItem{u}, 0, 0
	tr := measure.SeriesTracker{Warm: 1} // the read after its first request is the series' start
	var start int64
	began := t.clock.Now()
	for n, first := int64(1), true; first || t.clock.Now().Before(end); first = false {
		o.Requests = n
		res, err := arms.Unmeasured(ctx, o)
		if err != nil {
			return ug, err
		}
		if res != nil {
			ug.Requests += res.Requests
		}
		pid, uss, err := soleWorker(w)
		if err != nil {
			return ug, err
		}
		tr.Add(pid, ug.Requests, uss)
		if start == 0 {
			start = uss
		}
		g := measure.EstimateGrowth(tr.Series)
		if uss-start > urlGrowthCap || (g.Shown && g.Hi-g.Lo < 0.2*g.PerRequest) {
			break
		}
		// Steps double up to about a twelfth of the page's time at the rate seen so far.
		rate := float64(ug.Requests) / max(t.clock.Now().Sub(began).Seconds(), 1e-3)
		n = max(1, min(2*n, int64(rate*end.Sub(began).Seconds()/urlReads)))
	}
	if len(tr.Series) > 0 {
		ug.Points = tr.Series[len(tr.Series)-1].Points
	}
	ug.Growth = measure.EstimateGrowth(tr.Series)
	return ug, nil
}

// soleWorker is the pid and private memory of the one worker of w's pool, read once it is back waiting for a
// request (a worker still running has sent its response but may not have freed the request's memory yet).
func soleWorker(w *arms.Stack) (pid int, uss int64, err error) {
	master := w.Server.PID("php-fpm")
	pids, err := measure.ProcessGroup(master)
	if err != nil {
		return 0, 0, err
	}
	for _, p := range pids {
		if p == master {
			continue
		}
		for try := 0; ; try++ {
			ps, err := measure.ReadProc(p)
			if err != nil || ps.State == "Z" {
				break
			}
			if ps.State != "R" || try == 20 {
				return p, ps.USS, nil
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	return 0, 0, fmt.Errorf("%s: its worker is gone", w.Config)
}

// soakSizing turns the growth into pm.max_requests (the requests after which a worker reaches the memory the
// pool was sized with, or grows by measure.GrowthRoom when that is more, at the growth's upper bound, never fewer
// than minMaxRequests) and bounds the pool's memory with what a worker grows to by then.
func (t *tuner) soakSizing(sk *Soak) {
	ps := t.pool
	var sized int64
	if ps != nil {
		sized = ps.PerWorkerBytes
	}
	var logRate float64
	if l := t.o.LogLoad; l != nil {
		logRate = l.MeanRPS
	}
	n := soakAdvice(sk, sized, logRate)
	g := sk.Growth
	if !g.Shown {
		t.soakRow(sk, "")
		return
	}
	advice := fmt.Sprintf("%d would keep it within %s", n, bytesize.Format(float64(max(sk.SizedBytes, sk.grownAt(n)))))
	_, decides := t.soakKnob()
	v, pinned := t.o.Pins[knob.MaxRequests().Name]
	switch {
	case pinned:
		fmt.Sscan(v, &n)
		if n == 0 {
			t.warn(fmt.Sprintf("a worker grows %s a request, and pm.max_requests is pinned at 0: nothing bounds it (%s)",
				bytesize.Format(g.PerRequest), advice))
		}
	case !decides:
		// Raced on the user's values, or left out of this run: the soak's figure is advice.
		sk.MaxRequests = n
		sk.Note = joinNotes(sk.Note, "max_requests is not set from the soak in this run (--knob, --only or --skip): "+advice)
		t.warn(fmt.Sprintf("a worker grows %s a request; %s", bytesize.Format(g.PerRequest), sk.Note))
		return
	}
	sk.MaxRequests = n
	if n > 0 {
		sk.GrownBytes = sk.grownAt(n)
	}
	if ps != nil && sk.GrownBytes > ps.PerWorkerBytes {
		t.boundWithGrowth(ps, sk)
	}
	t.soakRow(sk, "")
}

// soakAdvice is what the soak's growth makes of a worker the pool was sized at sized bytes for: it sets sk's
// SizedBytes, StartBytes and Day (a day at the access log's mean rate, logRate, 0 without a log, and at the
// soak's), and returns the max_requests that keeps a worker within sized, or lets it grow by
// measure.GrowthRoom when that is more, at the growth's upper bound (0: no growth shown).
func soakAdvice(sk *Soak, sized int64, logRate float64) int {
	sk.SizedBytes = sized
	g := sk.Growth
	sk.StartBytes = startBytes(sk.Series, g.PerRequest)
	if !g.Shown {
		return 0 // a day's worth is not projected from an interval that holds no growth
	}
	// The access log's rate goes first: it is the load the pool serves (its mean, as a day is mostly not its
	// peak).
	if d, ok := sk.dayAt(logRate, "the access log's mean rate"); ok {
		sk.Day = append(sk.Day, d)
	}
	if d, ok := sk.dayAt(sk.RPS, "measured"); ok {
		sk.Day = append(sk.Day, d)
	}
	// The pool's bound then counts a worker at what it grows to (boundWithGrowth).
	return maxRequestsFor(max(sk.SizedBytes-sk.StartBytes, measure.GrowthRoom(sk.StartBytes)), g.Hi)
}

// grownAt is a fresh worker's private memory after n requests, at the growth's upper end.
func (sk *Soak) grownAt(n int) int64 { return sk.StartBytes + int64(max(sk.Growth.Hi, 0)*float64(n)) }

// dayAt is a worker after a day at rate requests a second shared by the soak's workers.
func (sk *Soak) dayAt(rate float64, from string) (DayAt, bool) {
	if rate <= 0 || sk.Workers <= 0 {
		return DayAt{}, false
	}
	g := sk.Growth
	perWorker := int64(rate * 86400 / float64(sk.Workers))
	d := DayAt{Rate: rate, From: from, Requests: perWorker, Bytes: sk.StartBytes,
		MaxBytes: sk.StartBytes + int64(max(g.Hi, 0)*float64(perWorker))}
	if g.Shown {
		d.Bytes += int64(g.PerRequest * float64(perWorker))
	}
	return d, true
}

// startBytes is a fresh worker's private memory between requests: the largest of the workers' first reads,
// less what each had grown by then at growth a request.
func startBytes(series []measure.WorkerSeries, growth float64) int64 {
	var s int64
	for _, w := range series {
		if len(w.Points) == 0 {
			continue
		}
		p := w.Points[0]
		s = max(s, p.USS-int64(max(growth, 0)*float64(p.Requests)))
	}
	return s
}

// maxRequestsFor is the requests in which a worker grows by headroom at growth a request, two significant
// figures rounded down, and never fewer than minMaxRequests.
func maxRequestsFor(headroom int64, growth float64) int {
	if growth <= 0 {
		return 0
	}
	n := int64(float64(headroom) / growth)
	m := int64(1)
	for n/m >= 100 {
		m *= 10
	}
	return int(max(n/m*m, minMaxRequests))
}

// boundWithGrowth counts each worker at what it grows to by max_requests: the pool's memory limit falls, and
// the pool with it when it no longer fits.
func (t *tuner) boundWithGrowth(ps *PoolSize, sk *Soak) {
	ps.GrownPerWorkerBytes = sk.GrownBytes
	if t.o.Memory <= 0 {
		return
	}
	limit := int((t.o.Memory - ps.SharedBytes) / sk.GrownBytes)
	if limit < 1 {
		// Not one worker grown that far fits: recycle it sooner.
		room := t.o.Memory - ps.SharedBytes - sk.StartBytes
		sk.MaxRequests = max(1, int(float64(room)/sk.Growth.Hi))
		sk.GrownBytes = sk.grownAt(sk.MaxRequests)
		ps.GrownPerWorkerBytes, limit = sk.GrownBytes, 1
		t.warn(fmt.Sprintf("a worker grows %s a request: in --memory %s only max_requests %d keeps one worker within it; "+
			"fix the leak", bytesize.Format(sk.Growth.PerRequest), bytesize.Format(float64(t.o.Memory)), sk.MaxRequests))
	}
	if ps.MemoryLimit > 0 && ps.MemoryLimit < limit {
		return // a tighter bound holds already (the OOM killer's in the sweep)
	}
	ps.MemoryLimit = limit
	if t.best.MaxChildren <= limit {
		return
	}
	if _, pinned := t.o.Pins[knob.MaxChildren().Name]; pinned {
		t.warn(fmt.Sprintf("pm.max_children %d is pinned, but counting each worker at the %s it grows to by max_requests "+
			"%d, %d fit in %s", t.best.MaxChildren, bytesize.Format(float64(sk.GrownBytes)), sk.MaxRequests, limit,
			bytesize.Format(float64(t.o.Memory))))
		return
	}
	t.best.MaxChildren, ps.Initial, ps.Chosen = limit, limit, limit
	ps.Note = "memory, counting each worker at what it grows to by max_requests, limits the pool below the CPU knee"
}

// soakRow sets the max_requests row from the soak (why it was not measured, when sk is nil: the soak did not
// run), and the recommendation's value, unless the knob is pinned, raced on values the user named, or not decided
// in this run.
func (t *tuner) soakRow(sk *Soak, why string) { t.soakRowAs(sk, StateNotMeasured, notMeasured, why) }

// soakRowAs is soakRow with the state and words of a row without a soak (sk nil).
func (t *tuner) soakRowAs(sk *Soak, state RowState, words, why string) {
	k, ok := t.soakKnob()
	if !ok {
		return
	}
	row := KnobRow{Name: k.Name, Value: k.Get(t.best), From: k.Get(t.o.Base)}.because(state, words, why)
	if sk != nil {
		if sk.Growth.Shown && sk.MaxRequests > 0 {
			t.best.MaxRequests = sk.MaxRequests
			row.Value = k.Get(t.best)
		}
		state, why := soakWhy(sk)
		row = row.because(state, soakWords(state), why)
	}
	if t.decided == nil {
		t.decided = map[string]KnobRow{}
	}
	t.decided[k.Name] = row
}

// soakKnob is the max_requests knob when the soak decides it: among the knobs, not pinned, and not given values
// to race (--knob max_requests=...).
func (t *tuner) soakKnob() (knob.Knob, bool) {
	for _, k := range t.o.Knobs {
		if k.Soak {
			_, pinned := t.o.Pins[k.Name]
			return k, !pinned
		}
	}
	return knob.Knob{}, false
}

// SoakNote begins the note of a row the soak decided.
const SoakNote = "soak: "

// soakNote is the max_requests row's note: the growth with its interval, the requests a worker may serve and
// the pages that leak.
func soakNote(sk *Soak) string {
	state, why := soakWhy(sk)
	return soakWords(state) + why
}

// soakWords are the words a soak row's note opens with for its state.
func soakWords(s RowState) string {
	if s == StateSoak {
		return SoakNote
	}
	return notMeasured
}

// soakWhy is the max_requests row's state and reason: the growth with its interval, the requests a worker may
// serve and the pages that leak; or why the soak could not tell.
func soakWhy(sk *Soak) (RowState, string) {
	g := sk.Growth
	if !g.Known() {
		return StateNotMeasured, cmp.Or(sk.Stopped, "no worker served enough requests to tell") + "; the starting value is kept"
	}
	over := fmt.Sprintf("%s a request (%s, %s)", g.String(), plural(g.Workers, "worker", "workers"),
		plural(int(g.Requests), "request", "requests"))
	if !g.Shown {
		return StateSoak, "no growth shown, " + over + "; the starting value is kept"
	}
	s := fmt.Sprintf("a worker grows %s; %d requests keep it within %s", over, sk.MaxRequests, bytesize.Format(float64(max(sk.GrownBytes, sk.SizedBytes))))
	if leaks := LeakNames(sk.URLs); leaks != "" {
		s += "; " + leaks
	} else if len(sk.URLs) > 1 {
		s += "; no page shown to grow it on its own"
	}
	return StateSoak, s
}

// LeakNames names the pages shown to grow a worker, the most first: "/leak.php grows a worker by 1.0 MiB a
// request".
func LeakNames(urls []URLGrowth) string {
	var leaks []URLGrowth
	for _, u := range urls {
		if u.Leaks() {
			leaks = append(leaks, u)
		}
	}
	slices.SortStableFunc(leaks, func(a, b URLGrowth) int { return cmp.Compare(b.Growth.PerRequest, a.Growth.PerRequest) })
	var out []string
	for i, u := range leaks {
		what := "grows a worker by"
		if i > 0 {
			what = "by"
		}
		out = append(out, fmt.Sprintf("%s %s %s a request", strings.TrimSpace(u.Method+" "+u.Path), what, bytesize.Format(u.Growth.PerRequest)))
	}
	return strings.Join(out, ", ")
}

func joinNotes(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
