package check

import (
	"fmt"
	"math"
	"os"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/measure"
	"github.com/phptune/phptune/internal/textline"
)

// Finding ids.
const (
	FindMaxChildren = "max_children"
	FindBacklog     = "listen_backlog"
	FindUnanswered  = "status_unanswered"
	FindSlow        = "slow_requests"
	FindMemoryLimit = "memory_at_max_children"
	FindOOMKills    = "oom_kills"
	FindGrowth      = "memory_growth"
	FindOpcacheOff  = "opcache_off"
	FindOpcacheFull = "opcache_full"
	FindOpcacheRst  = "opcache_restarts"
	FindOpcacheHits = "opcache_hit_rate"
	FindJITBuffer   = "jit_buffer"
)

// saturatedShare is the share of queue samples with a connection waiting (every worker busy) that makes the
// pool's size a finding without php-fpm's own "reached max_children" count (static pools keep none).
const saturatedShare = 0.05

// finder makes one finding with its suggestion (nil: nothing found; a Suggestion without Setting: none).
type finder func(p *Pool, tn tuneCmd) (*Finding, Suggestion)

// findings says what is wrong with the pool, each with its evidence, and what check would change. When memory
// bounds the pool, maxChildren suggests nothing (memory allows no more) and memoryLimit suggests the size that fits.
func findings(p *Pool, t Target) ([]Finding, []Suggestion) {
	tn := tuneLine(p, t)
	var fs []Finding
	var ss []Suggestion
	add := func(f *Finding, s Suggestion) {
		if f == nil {
			return
		}
		fs = append(fs, *f)
		if s.Setting != "" {
			s.Finding = f.ID
			ss = append(ss, s)
		}
	}
	for _, find := range []finder{maxChildren, backlog, unanswered, slowRequests, memoryLimit, oomKills, growth} {
		add(find(p, tn))
	}
	for _, of := range opcacheFindings(p, tn) {
		add(of.f, of.s)
	}
	return fs, ss
}

func dur(s float64) string {
	return time.Duration(s * float64(time.Second)).Round(time.Second).String()
}

func maxChildren(p *Pool, tn tuneCmd) (*Finding, Suggestion) {
	reached, b, q := p.Traffic.MaxChildrenReached, p.Busy, p.Queue
	saturated := b.MaxChildren > 0 && b.AtLimit > 0 && q.NonZero >= saturatedShare
	if reached == 0 && !saturated {
		return nil, Suggestion{}
	}
	f := &Finding{ID: FindMaxChildren}
	if reached > 0 {
		f.Title = fmt.Sprintf("pm.max_children reached %d time(s) in %s: requests waited for a worker", reached, dur(p.ElapsedS))
	} else {
		f.Title = fmt.Sprintf("every worker busy, with connections waiting, in %.0f%% of the samples over %s", 100*q.NonZero, dur(p.ElapsedS))
	}
	if total := p.Traffic.MaxChildrenReachedTotal; total > reached {
		f.Evidence = append(f.Evidence, fmt.Sprintf("php-fpm counted pm.max_children reached %d time(s) since the pool started "+
			"(it counts each time the limit is reached, not how long the pool stays there)", total))
	}
	mc := "unknown (give the pool file as TARGET)"
	if b.MaxChildren > 0 {
		mc = fmt.Sprint(b.MaxChildren)
	}
	f.Evidence = append(f.Evidence,
		fmt.Sprintf("busy workers: peak %d, p95 %s, mean %s of max_children %s; all busy in %.0f%% of samples", b.Peak, num(b.P95), num(b.Mean), mc, 100*b.AtLimit),
		fmt.Sprintf("listen queue: peak %d of backlog %d, connections waiting in %.0f%% of %d samples", q.Peak, q.Backlog, 100*q.NonZero, p.QueueSamples),
		fmt.Sprintf("a request waited for a worker: p50 %s ms, p95 %s ms, max %s ms (check's own status requests); %s ms on average by Little's law at %s req/s",
			num(q.StatusWaitP50), num(q.StatusWaitP95), num(q.StatusWaitMax), num(q.WaitLittle), num(p.Traffic.PerSecond)))
	if p.CPU != nil && p.CPU.Of > 0 {
		f.Evidence = append(f.Evidence, fmt.Sprintf("the pool used %s of %d CPUs", num(p.CPU.Cores), p.CPU.Of))
	}
	if b.MaxChildren == 0 {
		return f, Suggestion{}
	}
	demand := b.Peak + q.Peak
	want := max(b.MaxChildren+1, demand)
	s := Suggestion{Setting: "pm.max_children", Current: fmt.Sprint(b.MaxChildren)}
	why := fmt.Sprintf("%d requests at once at the peak (%d busy + %d waiting)", demand, b.Peak, q.Peak)
	m := p.Memory
	switch {
	case m.Fits > 0 && m.Fits <= b.MaxChildren:
		// Memory allows no more: more workers would end in the OOM killer.
		return f, Suggestion{}
	case m.Fits > 0:
		want = min(want, m.Fits)
		why += fmt.Sprintf("; memory allows %d (%s a worker, %s for the pool: %s)", m.Fits, mib(m.PerWorker), mib(m.Budget), m.LimitSource)
	}
	if p.CPU != nil && p.CPU.Of > 0 && p.CPU.Cores >= 0.85*float64(p.CPU.Of) {
		why += fmt.Sprintf("; but the CPUs were busy (%s of %d): more workers may only wait on the CPU instead, which tune measures", num(p.CPU.Cores), p.CPU.Of)
	}
	s.Suggested, s.Why = fmt.Sprint(want), why
	s.Verify = tn.with("") + tn.memory()
	return f, s
}

func backlog(p *Pool, tn tuneCmd) (*Finding, Suggestion) {
	q := p.Queue
	if q.Backlog <= 0 || q.Peak < q.Backlog {
		return nil, Suggestion{}
	}
	f := &Finding{ID: FindBacklog, Title: fmt.Sprintf("the listen queue reached its backlog (%d): new connections were refused, which nginx answers with 502", q.Backlog),
		Evidence: []string{fmt.Sprintf("listen queue peak %d of backlog %d (%s)", q.Peak, q.Backlog, q.Source)}}
	s := Suggestion{Setting: "listen.backlog", Current: fmt.Sprint(q.Backlog), Suggested: "4096",
		Why:    fmt.Sprintf("%d connections waited at once, the most the socket keeps; the kernel caps it at net.core.somaxconn", q.Peak),
		Verify: tn.with("--only backlog --knob backlog=0,4096")}
	return f, s
}

func unanswered(p *Pool, tn tuneCmd) (*Finding, Suggestion) {
	if p.StatusMissed == 0 && p.StatusFailed > 0 {
		return &Finding{ID: FindUnanswered,
			Title: fmt.Sprintf("the status page failed %d time(s), each after a second try: %s", p.StatusFailed, p.StatusError),
			Evidence: []string{fmt.Sprintf("%d of %d status reads failed twice in a row (the first failure: %s)", p.StatusFailed,
				p.StatusFailed+p.Samples, p.StatusError)}}, Suggestion{}
	}
	if p.StatusMissed == 0 {
		return nil, Suggestion{}
	}
	return unansweredHeld(p, tn)
}

func slowRequests(p *Pool, _ tuneCmd) (*Finding, Suggestion) {
	if p.Traffic.SlowRequests == 0 && len(p.Slow.Seen) == 0 {
		return nil, Suggestion{}
	}
	f := &Finding{ID: FindSlow}
	if p.Traffic.SlowRequests > 0 {
		f.Title = fmt.Sprintf("%d slow request(s) in %s (over request_slowlog_timeout %s)", p.Traffic.SlowRequests, dur(p.ElapsedS), dur(p.Settings.SlowlogTimeoutS))
	} else {
		f.Title = fmt.Sprintf("%d request(s) seen running %s or longer", len(p.Slow.Seen), dur(p.Slow.Threshold))
	}
	for _, r := range p.Slow.Seen {
		f.Evidence = append(f.Evidence, fmt.Sprintf("%s ran %s s or more (pid %d, %s)", r.URI, num(r.DurationS), r.PID, r.Script))
	}
	return f, Suggestion{}
}

func memoryLimit(p *Pool, tn tuneCmd) (*Finding, Suggestion) {
	m, mc := p.Memory, p.Settings.MaxChildren
	if m.AtMaxChildren == 0 || m.Budget == 0 || m.AtMaxChildren <= m.Budget {
		return nil, Suggestion{}
	}
	f := &Finding{ID: FindMemoryLimit,
		Title: fmt.Sprintf("at pm.max_children %d the pool may take %s, more than the %s it has", mc, mib(m.AtMaxChildren), mib(m.Budget)),
		Evidence: []string{
			fmt.Sprintf("a worker: up to %s private (USS; mean %s, PHP's own peak for a request %s), %s shared, counted once", mib(m.MaxUSS),
				mib(m.MeanUSS), mib(m.PeakRequest), mib(m.Shared)),
			fmt.Sprintf("%d x %s + %s shared + %s master = %s; now %s with %d workers", mc, mib(m.PerWorker), mib(m.Shared), mib(m.MasterUSS),
				mib(m.AtMaxChildren), mib(m.Now), p.Busy.Workers),
			"the pool's memory: " + m.LimitSource,
		}}
	s := Suggestion{Setting: "pm.max_children", Current: fmt.Sprint(mc), Suggested: fmt.Sprint(max(m.Fits, 1)),
		Why:    fmt.Sprintf("%s for the pool, less %s shared and %s master, at %s a worker", mib(m.Budget), mib(m.Shared), mib(m.MasterUSS), mib(m.PerWorker)),
		Verify: tn.with("") + tn.memory()}
	return f, s
}

func oomKills(p *Pool, _ tuneCmd) (*Finding, Suggestion) {
	if p.Memory.OOMKills <= 0 {
		return nil, Suggestion{}
	}
	return &Finding{ID: FindOOMKills, Title: fmt.Sprintf("the OOM killer killed %d process(es) in the pool's cgroup during the check", p.Memory.OOMKills),
		Evidence: []string{"the pool's memory: " + p.Memory.LimitSource}}, Suggestion{}
}

func growth(p *Pool, tn tuneCmd) (*Finding, Suggestion) {
	g, m := p.Growth, p.Memory
	if !g.Leaking(m.MeanUSS) {
		return nil, Suggestion{}
	}
	horizon := fmt.Sprintf("pm.max_requests = %d", g.Horizon)
	if p.Settings.MaxRequests <= 0 {
		horizon = fmt.Sprintf("pm.max_requests = 0 never recycles them; over %d requests", HorizonNever)
	}
	f := &Finding{ID: FindGrowth,
		Title: fmt.Sprintf("workers grow %s a request: %s each before they are recycled", kib(g.PerRequest), mib(g.Projected)),
		Evidence: []string{
			fmt.Sprintf("private memory (USS) against requests served, %d of %d workers growing over %d requests: %s a request (at least %s), "+
				"%s in the first half of the window, %s in the second", g.Growing, g.Workers, g.Requests, kib(g.PerRequest), kib(g.Lower),
				kib(g.FirstHalf), kib(g.SecondHalf)),
			fmt.Sprintf("%s: %s a worker, against %s now (mean USS)", horizon, mib(g.Projected), mib(m.MeanUSS)),
		}}
	allowed := float64(max(growthFloor, m.MeanUSS))
	if mc := p.Settings.MaxChildren; mc > 0 && m.Budget > 0 && m.AtMaxChildren > 0 {
		if room := float64(m.Budget-m.AtMaxChildren) / float64(mc); room > growthFloor && room < allowed {
			allowed = room
		}
	}
	n := roundDown125(int64(allowed / g.PerRequest))
	cur := fmt.Sprint(p.Settings.MaxRequests)
	s := Suggestion{Setting: "pm.max_requests", Current: cur, Suggested: fmt.Sprint(n),
		Why: fmt.Sprintf("a worker may grow %s before it is replaced, at %s a request; better still, find what the pages keep between requests",
			mib(int64(allowed)), kib(g.PerRequest)),
		Verify: tn.with(fmt.Sprintf("--only max_requests --knob max_requests=%s,%d", cur, n))}
	if !p.Settings.Known {
		s.Current = "unknown"
	}
	return f, s
}

// roundDown125 rounds n down to 1, 2 or 5 times a power of ten, at least 10.
func roundDown125(n int64) int64 {
	if n < 10 {
		return 10
	}
	p := int64(math.Pow(10, math.Floor(math.Log10(float64(n)))))
	for _, m := range []int64{5, 2, 1} {
		if m*p <= n {
			return m * p
		}
	}
	return p
}

type opcacheFinding struct {
	f *Finding
	s Suggestion
}

func opcacheFindings(p *Pool, tn tuneCmd) []opcacheFinding {
	c := p.Opcache
	o := c.Last
	if o == nil {
		return nil
	}
	if !o.Enabled {
		return []opcacheFinding{{f: &Finding{ID: FindOpcacheOff, Title: "opcache is off: every request compiles its scripts again",
			Evidence: []string{fmt.Sprintf("opcache loaded: %v, opcache.enable = %q", o.Loaded, o.INI["opcache.enable"])}},
			s: Suggestion{Setting: "opcache.enable", Current: "0", Suggested: "1", Why: "opcache keeps compiled scripts in shared memory",
				Verify: tn.with("--only opcache")}}}
	}
	var out []opcacheFinding
	// Sized from the fullest read: a read just after a restart sees an emptied cache.
	sized := c.Fullest
	sizes := opcacheSuggestion(sized, tn)
	evidence := opcacheEvidence(sized)
	full := opcacheUse(sized)
	if why := full.Full(); why != "" {
		if sized != o {
			evidence = append(evidence, "the last read found it emptied by a restart")
		}
		out = append(out, opcacheFinding{f: &Finding{ID: FindOpcacheFull, Title: "opcache is full: " + why, Evidence: evidence}, s: sizes})
	}
	if n := c.OOMRestarts + c.HashRestarts; n > 0 {
		f := &Finding{ID: FindOpcacheRst, Title: fmt.Sprintf("opcache filled up and restarted %d time(s) in %s, emptying the cache for every worker",
			n, dur(p.ElapsedS)),
			Evidence: append([]string{fmt.Sprintf("%d for lack of memory, %d for lack of keys; %d and %d since the pool started", c.OOMRestarts, c.HashRestarts,
				o.OOMRestarts, o.HashRestarts)}, evidence...)}
		s := Suggestion{}
		if full.Full() == "" {
			s = sizes
		}
		out = append(out, opcacheFinding{f: f, s: s})
	}
	if c.WindowLookups >= minLookups && c.WindowHitRate < 99 {
		out = append(out, opcacheFinding{f: &Finding{ID: FindOpcacheHits,
			Title:    fmt.Sprintf("opcache hit rate %s%% over the window: scripts were compiled again", num(c.WindowHitRate)),
			Evidence: append([]string{fmt.Sprintf("%d lookups in %s, %s%% since the pool started", c.WindowLookups, dur(p.ElapsedS), num(o.HitRate))}, evidence...)}})
	}
	if o.JITBufferSize > 0 && o.JITBufferFree*20 < o.JITBufferSize {
		size := o.JITBufferSize
		out = append(out, opcacheFinding{f: &Finding{ID: FindJITBuffer,
			Title:    fmt.Sprintf("the JIT buffer is full: %s free of %s, code beyond it is not compiled", kib(float64(o.JITBufferFree)), mib(size)),
			Evidence: []string{fmt.Sprintf("opcache.jit = %s, opcache.jit_buffer_size = %s", o.INI["opcache.jit"], o.INI["opcache.jit_buffer_size"])}},
			s: Suggestion{Setting: "opcache.jit_buffer_size", Current: o.INI["opcache.jit_buffer_size"], Suggested: fmt.Sprintf("%dM", 2*size>>20),
				Why: fmt.Sprintf("%s used of %s", mib(size-o.JITBufferFree), mib(size)), Verify: tn.with("--only jit")}})
	}
	return out
}

// opcacheSuggestion is opcache's three sizes with room for twice what o shows in use (tune's opcache_memory
// rule), or none when that is what the pool has.
func opcacheSuggestion(o *measure.Opcache, tn tuneCmd) Suggestion {
	u := opcacheUse(o)
	v := knob.OpcacheMemory().Suggest(knob.Facts{Opcache: &u}, knob.Config{})
	cur := opcacheSizes(o)
	if len(v) == 0 || v[0] == cur {
		return Suggestion{}
	}
	return Suggestion{Setting: "opcache.memory_consumption/interned_strings_buffer/max_accelerated_files", Current: cur, Suggested: v[0],
		Why: fmt.Sprintf("room for twice what is used: %s memory (+%s wasted), %d keys, %s interned strings", mib(o.MemoryUsed),
			mib(o.MemoryWasted), o.CachedKeys, mib(o.InternedUsed)),
		Verify: tn.with(fmt.Sprintf("--only opcache_memory --knob opcache_memory=%s,%s", cur, v[0]))}
}

func opcacheUse(o *measure.Opcache) knob.OpcacheUse {
	return knob.OpcacheUse{MemoryUsed: o.MemoryUsed, MemoryFree: o.MemoryFree, MemoryWasted: o.MemoryWasted, InternedUsed: o.InternedUsed,
		InternedFree: o.InternedFree, Keys: o.CachedKeys, MaxKeys: o.MaxCachedKeys, CacheFull: o.CacheFull, HitRate: o.HitRate}
}

// opcacheSizes is opcache's three sizes as tune's opcache_memory knob writes them: MEMORY_MIB/STRINGS_MIB/FILES.
func opcacheSizes(o *measure.Opcache) string {
	return fmt.Sprintf("%s/%s/%s", o.INI["opcache.memory_consumption"], o.INI["opcache.interned_strings_buffer"], o.INI["opcache.max_accelerated_files"])
}

func opcacheEvidence(o *measure.Opcache) []string {
	total := o.MemoryUsed + o.MemoryFree + o.MemoryWasted
	return []string{
		fmt.Sprintf("memory: %s used, %s wasted, %s free of %s (opcache.memory_consumption = %s)", mib(o.MemoryUsed), mib(o.MemoryWasted),
			mib(o.MemoryFree), mib(total), o.INI["opcache.memory_consumption"]),
		fmt.Sprintf("keys: %d of %d (opcache.max_accelerated_files = %s), %d scripts", o.CachedKeys, o.MaxCachedKeys, o.INI["opcache.max_accelerated_files"], o.CachedScripts),
		fmt.Sprintf("interned strings: %s used of %s", mib(o.InternedUsed), mib(o.InternedBuffer)),
	}
}

// notes are what check could not read, and why, and what the figures leave out.
func notes(t Target, w window, p *Pool) []string {
	var n []string
	if !p.Settings.Known {
		n = append(n, "the pool's configuration was not read, so pm.max_children is unknown (php-fpm's status page does not report it, "+
			"php-src#16221): give the pool file as TARGET")
	}
	if w.opWhy != "" {
		n = append(n, "opcache not read: "+w.opWhy)
	}
	if w.queueErr != nil && len(w.queue) == 0 {
		n = append(n, "the socket's accept queue was not read from the kernel ("+w.queueErr.Error()+"): the queue is php-fpm's (TCP only)")
	}
	if p.Settings.Known && p.Settings.SlowlogTimeoutS == 0 {
		n = append(n, fmt.Sprintf("request_slowlog_timeout is not set, so php-fpm counts no slow requests: requests seen running %s or longer are reported instead",
			dur(p.Slow.Threshold)))
	}
	if p.Traffic.Restarts > 0 {
		n = append(n, fmt.Sprintf("the pool's counters went back %d time(s): it was reloaded or restarted during the check", p.Traffic.Restarts))
	}
	if w.memErr != nil {
		n = append(n, fmt.Sprintf("workers' memory not read (%v): run check as root, or as the pool's user", w.memErr))
	}
	if p.Memory.Error != "" {
		n = append(n, "memory limit not read: "+p.Memory.Error)
	}
	if g := p.Growth; g == nil && p.Samples > 0 {
		n = append(n, fmt.Sprintf("growth per request not measured: no worker was read four times with requests between, after its first %d", warmupRequests))
	}
	if c := p.Opcache; c.Last != nil && c.OOMRestarts+c.HashRestarts == 0 && c.Last.OOMRestarts+c.Last.HashRestarts > 0 {
		n = append(n, fmt.Sprintf("opcache restarted %d time(s) for lack of memory or keys before the check (none during it)", c.Last.OOMRestarts+c.Last.HashRestarts))
	}
	return n
}

func num(v float64) string {
	switch a := math.Abs(v); {
	case a >= 100 || v == math.Trunc(v):
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

func mib(b int64) string {
	if b != 0 && b < 1<<20 && b > -(1<<20) {
		return fmt.Sprintf("%.0f KiB", float64(b)/1024)
	}
	return fmt.Sprintf("%s MiB", num(float64(b)/(1<<20)))
}

func kib(b float64) string {
	if math.Abs(b) >= 1<<20 {
		return mib(int64(b))
	}
	return fmt.Sprintf("%s KiB", num(b/1024))
}

const debianAccessLog = "/var/log/nginx/access.log"

// tuneCmd is the tune command line that would verify a suggestion: the app's docroot and the pages seen
// served, from the full status.
type tuneCmd struct {
	base   string
	budget int64
	bound  string
}

func (c tuneCmd) with(extra string) string {
	if extra == "" {
		return c.base
	}
	return c.base + " " + extra
}

// memory adds --memory when a cgroup bounds the pool: tune would plan with the host's memory otherwise.
func (c tuneCmd) memory() string {
	if c.budget <= 0 || !strings.Contains(c.bound, "cgroup") {
		return ""
	}
	return fmt.Sprintf(" --memory %dMiB", c.budget>>20)
}

func tuneLine(p *Pool, t Target) tuneCmd {
	parts := []string{"phptune tune", p.App.Docroot}
	if p.App.Front != "" && p.App.Front != "index.php" {
		parts = append(parts, "--front", p.App.Front)
	}
	if p.PoolFile != "" {
		parts = append(parts, "--from-pool", p.PoolFile)
	}
	for _, u := range p.App.URLs {
		parts = append(parts, "--url", textline.QuoteIfNeeded(u))
	}
	if len(p.App.URLs) == 0 {
		// The mix users send is in the web server's log; Debian's nginx writes it here.
		if st, err := os.Stat(debianAccessLog); err == nil && st.Mode().IsRegular() {
			parts = append(parts, "--from-access-log", debianAccessLog)
		}
	}
	return tuneCmd{base: strings.Join(parts, " "), budget: p.Memory.Budget, bound: p.Memory.LimitSource}
}
