package check

import (
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/fpmconf"
	"github.com/phptune/phptune/internal/measure"
	"github.com/phptune/phptune/internal/stats"
)

// ownAccepted is what one of check's requests adds to php-fpm's accepted conn: the request, and the close of
// its kept connection (measured: 16 reads added 32).
const ownAccepted = 2

// defaultSlow is how long a request must have run, seen in the full status, to be reported as slow when the
// pool sets no request_slowlog_timeout.
const defaultSlow = 5 * time.Second

// window is what a sampler gathered, with what was read around it.
type window struct {
	start, end time.Time
	obs        []observation
	queue      []queueObs
	backlog    int
	queueErr   error
	memErr     error
	missed     int
	held       []heldObs // the workers' states at each unanswered status read
	failed     int
	failErr    error
	own        int
	opcache    []*measure.Opcache
	opWhy      string // why opcache was not read
	// Read before and after the window: the master's private memory, the limits of its cgroup, the pool's
	// CPU time (ok false when it could not be told apart from other processes).
	masterUSS int64
	limits    *measure.Limits
	limitsErr error
	oomBefore int64
	oomAfter  int64
	oomOK     bool
	cpuUsed   time.Duration
	cpuOK     bool
}

// analyze sums up one pool's window.
func analyze(t Target, w window) *Pool {
	p := &Pool{Name: t.Name, Network: t.Network, Address: t.Address, StatusPath: t.StatusPath, MasterPID: t.MasterPID,
		Config: t.Config, Samples: len(w.obs), StatusMissed: w.missed, StatusFailed: w.failed, OwnRequests: w.own, QueueSamples: len(w.queue),
		ElapsedS: w.end.Sub(w.start).Seconds()}
	if t.Pool != nil {
		p.PoolFile = t.Pool.File
	}
	if w.failErr != nil {
		p.StatusError = w.failErr.Error()
	}
	if p.Name == "" && len(w.obs) > 0 {
		p.Name = w.obs[0].status.Pool
	}
	p.Settings = settingsOf(t, w)
	p.App = appOf(w, t.StatusPath)
	p.Traffic = traffic(w, p.ElapsedS)
	p.Busy, p.Series.T, p.Series.Busy, p.Series.Workers = busy(w, t.StatusPath, p.Settings.MaxChildren)
	p.Queue, p.Series.QT, p.Series.Queue = queue(w, p.Traffic.PerSecond)
	p.Settings.Backlog = p.Queue.Backlog
	p.Slow = slow(w, t.StatusPath, p.Settings.SlowlogTimeoutS)
	p.Memory, p.Series.MT, p.Series.Memory = memory(w, p.Settings.MaxChildren)
	p.Growth = growthOf(w, t.StatusPath, p.Settings.MaxRequests)
	p.Opcache = opcacheOf(w)
	p.Held = heldOf(w)
	if w.cpuOK && p.ElapsedS > 0 {
		p.CPU = &CPU{UsedS: w.cpuUsed.Seconds(), Cores: w.cpuUsed.Seconds() / p.ElapsedS, Of: cpusOf(w)}
	}
	p.Notes = notes(t, w, p)
	p.Findings, p.Suggestions = findings(p, t)
	return p
}

// settingsOf reads the pool's settings from its configuration; without one, a static pool's size is its
// workers' count.
func settingsOf(t Target, w window) Settings {
	var s Settings
	if t.Pool != nil {
		s.Known = true
		s.PM, s.MaxChildren, s.MaxRequests = t.Pool.PM, t.Pool.MaxChildren, t.Pool.MaxRequests
		s.SlowlogTimeoutS = fpmSeconds(t.Pool.Setting("request_slowlog_timeout", "0"))
		s.TerminateTimeout = fpmSeconds(t.Pool.Setting("request_terminate_timeout", "0"))
		return s
	}
	if len(w.obs) > 0 {
		st := w.obs[len(w.obs)-1].status
		s.PM = st.PM
		if st.PM == "static" {
			s.MaxChildren = st.Workers()
		}
	}
	return s
}

// fpmSeconds reads a php-fpm time value as php-fpm does (0 where it is not one).
func fpmSeconds(v string) float64 {
	n, err := fpmconf.ParseSeconds(strings.TrimSpace(v))
	if err != nil {
		return 0
	}
	return float64(n)
}

// traffic is the counters' growth over the window: a counter that goes back (the pool was reloaded) starts
// again from its new value.
func traffic(w window, elapsed float64) Traffic {
	var tr Traffic
	for i := 1; i < len(w.obs); i++ {
		a, b := w.obs[i-1].status, w.obs[i].status
		if b.AcceptedConn < a.AcceptedConn || b.StartSince < a.StartSince {
			tr.Restarts++
			tr.Accepted += b.AcceptedConn
			tr.MaxChildrenReached += b.MaxChildrenReached
			tr.SlowRequests += b.SlowRequests
			continue
		}
		tr.Accepted += b.AcceptedConn - a.AcceptedConn
		tr.MaxChildrenReached += b.MaxChildrenReached - a.MaxChildrenReached
		tr.SlowRequests += b.SlowRequests - a.SlowRequests
	}
	if n := len(w.obs); n > 1 {
		tr.Accepted = max(tr.Accepted-ownAccepted*int64(w.obs[n-1].ownBefore-w.obs[0].ownBefore), 0)
		tr.MaxChildrenReachedTotal = w.obs[n-1].status.MaxChildrenReached
	}
	if n := len(w.obs); n > 1 {
		if span := w.obs[n-1].at.Sub(w.obs[0].at).Seconds(); span > 0 {
			tr.PerSecond = float64(tr.Accepted) / span
		}
	} else if elapsed > 0 {
		tr.PerSecond = float64(tr.Accepted) / elapsed
	}
	return tr
}

// ownRequest says whether a worker serves a status or ping request (check's own, or a monitor's): not the
// app's work.
func ownRequest(p measure.FPMProcess, statusPath string) bool {
	path, _, _ := strings.Cut(p.RequestURI, "?")
	return p.State != "Idle" && (path == statusPath || p.Script == statusPath)
}

// busyOf is the workers taken at one read: every one not Idle, less check's own (and any monitor's) status
// request, plus the worker check's request took when a connection was waiting for it (that worker would be
// serving the app otherwise).
func busyOf(o observation, statusPath string) int {
	n, own := 0, 0
	for _, p := range o.status.Processes {
		switch {
		case ownRequest(p, statusPath):
			own++
		case p.State != "Idle":
			n++
		}
	}
	if o.queue > 0 && own > 0 {
		n++
	}
	return min(n, len(o.status.Processes))
}

func busy(w window, statusPath string, maxChildren int) (Busy, []float64, []int, []int) {
	b := Busy{MaxChildren: maxChildren}
	var ts []float64
	var counts, workers []int
	var vals []float64
	atLimit := 0
	for _, o := range w.obs {
		n := busyOf(o, statusPath)
		ts = append(ts, round(o.at.Sub(w.start).Seconds(), 2))
		counts = append(counts, n)
		workers = append(workers, o.status.Workers())
		vals = append(vals, float64(n))
		b.Peak = max(b.Peak, n)
		b.Workers = max(b.Workers, o.status.Workers())
		if maxChildren > 0 && n >= maxChildren {
			atLimit++
		}
	}
	if len(vals) > 0 {
		sort.Float64s(vals)
		b.P95 = quantile(vals, 0.95)
		b.Mean = round(mean(vals), 2)
		b.AtLimit = round(float64(atLimit)/float64(len(vals)), 3)
	}
	return b, ts, counts, workers
}

func queue(w window, perSecond float64) (Queue, []float64, []int) {
	q := Queue{Backlog: w.backlog, Source: "kernel"}
	var ts []float64
	var vals []int
	if len(w.queue) > 0 {
		for _, s := range w.queue {
			ts = append(ts, round(s.at.Sub(w.start).Seconds(), 2))
			vals = append(vals, s.queued)
		}
	} else {
		q.Source = "status"
		for _, o := range w.obs {
			if o.queue >= 0 {
				ts = append(ts, round(o.at.Sub(w.start).Seconds(), 2))
				vals = append(vals, o.queue)
			}
		}
		if n := len(w.obs); n > 0 {
			q.Backlog = int(w.obs[n-1].status.ListenQueueLen)
		}
	}
	nonzero, sum := 0, 0
	for _, v := range vals {
		q.Peak = max(q.Peak, v)
		sum += v
		if v > 0 {
			nonzero++
		}
	}
	if len(vals) > 0 {
		q.Mean = round(float64(sum)/float64(len(vals)), 3)
		q.NonZero = round(float64(nonzero)/float64(len(vals)), 3)
		if perSecond > 0 {
			q.WaitLittle = round(1000*q.Mean/perSecond, 2)
		}
	}
	if n := len(w.obs); n > 1 && w.obs[n-1].status.MaxListenQueue > w.obs[0].status.MaxListenQueue {
		q.MaxListenQueue = w.obs[n-1].status.MaxListenQueue
		q.Peak = max(q.Peak, int(q.MaxListenQueue))
	}
	var waits []float64
	for _, o := range w.obs {
		waits = append(waits, float64(o.wait.Microseconds())/1000)
	}
	for i := 0; i < w.missed; i++ {
		waits = append(waits, statusTimeout.Seconds()*1000)
	}
	if len(waits) > 0 {
		sort.Float64s(waits)
		q.StatusWaitP50 = round(quantile(waits, 0.5), 2)
		q.StatusWaitP95 = round(quantile(waits, 0.95), 2)
		q.StatusWaitMax = round(waits[len(waits)-1], 2)
	}
	return q, ts, vals
}

// slow lists the requests seen running at least the pool's request_slowlog_timeout (defaultSlow without one),
// the longest of each request once.
func slow(w window, statusPath string, slowlog float64) Slow {
	s := Slow{Threshold: slowlog}
	if s.Threshold <= 0 {
		s.Threshold = defaultSlow.Seconds()
	}
	seen := map[[2]int64]SlowRecord{}
	for _, o := range w.obs {
		for _, p := range o.status.Processes {
			d := float64(p.RequestDuration) / 1e6
			if p.State != "Running" || ownRequest(p, statusPath) || d < s.Threshold {
				continue
			}
			k := [2]int64{int64(p.PID), p.Requests}
			if d > seen[k].DurationS {
				seen[k] = SlowRecord{URI: p.RequestURI, Script: p.Script, DurationS: round(d, 2), PID: p.PID}
			}
		}
	}
	for _, r := range seen {
		s.Seen = append(s.Seen, r)
	}
	slices.SortFunc(s.Seen, func(a, b SlowRecord) int {
		if a.DurationS != b.DurationS {
			return cmpFloat(b.DurationS, a.DurationS)
		}
		return a.PID - b.PID
	})
	if len(s.Seen) > 10 {
		s.Seen = s.Seen[:10]
	}
	return s
}

// memory sums up the workers' memory over the window and what the pool may take at max_children, with the
// pool's memory at each read of it (seconds since the start, bytes).
func memory(w window, maxChildren int) (Memory, []float64, []int64) {
	m := Memory{MasterUSS: w.masterUSS}
	var shared, ts []float64
	var series []int64
	var sumUSS, n int64
	pids := map[int]bool{}
	for _, o := range w.obs {
		for _, p := range o.status.Processes {
			m.PeakRequest = max(m.PeakRequest, p.LastRequestMemory)
		}
		if o.mem == nil {
			continue
		}
		var total int64
		for _, p := range o.status.Processes {
			pm, ok := o.mem[p.PID]
			if !ok {
				continue
			}
			pids[p.PID] = true
			m.MaxUSS = max(m.MaxUSS, pm.uss)
			sumUSS += pm.uss
			n++
			total += pm.uss
			shared = append(shared, float64(pm.rss-pm.uss))
		}
		series = append(series, total)
		ts = append(ts, round(o.at.Sub(w.start).Seconds(), 2))
	}
	m.Workers = len(pids)
	if n > 0 {
		m.MeanUSS = sumUSS / n
		m.Shared = int64(stats.Median(shared))
	}
	for i := range series {
		series[i] += m.MasterUSS + m.Shared
		m.Peak = max(m.Peak, series[i])
	}
	if len(series) > 0 {
		m.Now = series[len(series)-1]
	}
	m.PerWorker = max(m.MaxUSS, m.PeakRequest)
	if maxChildren > 0 && m.PerWorker > 0 {
		m.AtMaxChildren = m.MasterUSS + m.Shared + int64(maxChildren)*m.PerWorker
	}
	switch {
	case w.limits == nil:
		if w.limitsErr != nil {
			m.Error = w.limitsErr.Error()
		}
	default:
		l := w.limits
		avail, bound := l.Memory()
		// What the pool holds now is its own to keep: available to it is what is free plus that.
		m.Budget, m.LimitSource = avail+m.Now, bound
		m.Limit = l.HostMemTotal
		if l.MemoryMax > 0 {
			m.Limit = l.MemoryMax
		}
		if l.MemoryHigh > 0 && l.MemoryHigh < m.Limit {
			m.Limit = l.MemoryHigh
		}
		if m.PerWorker > 0 {
			m.Fits = int(max(m.Budget-m.MasterUSS-m.Shared, 0) / m.PerWorker)
		}
	}
	if w.oomOK {
		m.OOMKills = w.oomAfter - w.oomBefore
	}
	return m, ts, series
}

// opcacheOf compares opcache's first and last reads.
func opcacheOf(w window) OpcacheCheck {
	c := OpcacheCheck{Reads: len(w.opcache), Why: w.opWhy}
	if len(w.opcache) == 0 {
		return c
	}
	c.First, c.Last = w.opcache[0], w.opcache[len(w.opcache)-1]
	for _, o := range w.opcache {
		if c.Fullest == nil || fill(o) >= fill(c.Fullest) {
			c.Fullest = o
		}
	}
	var hits, misses int64
	for i := 1; i < len(w.opcache); i++ {
		a, b := w.opcache[i-1], w.opcache[i]
		// Restart counters go back only when the master restarts; hits and misses at each opcache restart.
		c.OOMRestarts += max(b.OOMRestarts-a.OOMRestarts, 0)
		c.HashRestarts += max(b.HashRestarts-a.HashRestarts, 0)
		if b.Hits >= a.Hits && b.Misses >= a.Misses {
			hits, misses = hits+b.Hits-a.Hits, misses+b.Misses-a.Misses
		} else {
			hits, misses = hits+b.Hits, misses+b.Misses
		}
	}
	// check's own script misses each time it is run (opcache does not keep it): those are not the app's.
	misses = max(misses-int64(len(w.opcache)-1), 0)
	c.WindowLookups = hits + misses
	if c.WindowLookups >= minLookups {
		c.WindowHitRate = round(100*float64(hits)/float64(c.WindowLookups), 3)
	}
	return c
}

// fill is how full opcache is: the larger of its memory's and its keys' shares in use.
func fill(o *measure.Opcache) float64 {
	f := 0.0
	if total := o.MemoryUsed + o.MemoryFree + o.MemoryWasted; total > 0 {
		f = float64(o.MemoryUsed+o.MemoryWasted) / float64(total)
	}
	if o.MaxCachedKeys > 0 {
		f = math.Max(f, float64(o.CachedKeys)/float64(o.MaxCachedKeys))
	}
	return f
}

// minLookups is the fewest script lookups in the window that make its hit rate worth a finding.
const minLookups = 1000

func cpusOf(w window) int {
	if w.limits != nil {
		return w.limits.WholeCPUs()
	}
	return 0
}

func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func mean(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

func round(v float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(v*p) / p
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// appOf reads the app from the requests the full status showed: the script served most is its front
// controller, the URIs seen most its mix (weights in tens of percent, at least 1).
func appOf(w window, statusPath string) App {
	scripts, uris := map[string]int{}, map[string]int{}
	seen := map[[2]int64]bool{}
	total := 0
	for _, o := range w.obs {
		for _, p := range o.status.Processes {
			k := [2]int64{int64(p.PID), p.Requests}
			if seen[k] || p.Script == "" || p.Script == "-" || ownRequest(p, statusPath) || strings.HasPrefix(p.RequestURI, statusPath+"?") {
				continue
			}
			seen[k] = true
			scripts[p.Script]++
			uris[p.RequestURI]++
			total++
		}
	}
	a := App{Docroot: "DOCROOT"}
	if s := top(scripts, 1); len(s) == 1 && strings.HasPrefix(s[0], "/") {
		a.Docroot, a.Front = filepath.Dir(s[0]), filepath.Base(s[0])
	}
	// php-fpm shows the script and its query, not the URL asked for: a front controller's pages all read
	// /index.php. Only several scripts make a mix worth naming.
	paths := map[string]bool{}
	for u := range uris {
		p, _, _ := strings.Cut(u, "?")
		paths[p] = true
	}
	if len(paths) < 2 {
		return a
	}
	for _, u := range top(uris, 5) {
		weight := max(1, int(math.Round(10*float64(uris[u])/float64(total))))
		if weight > 1 {
			u += "=" + strconv.Itoa(weight)
		}
		a.URLs = append(a.URLs, u)
	}
	return a
}

// top is the n keys with the highest counts, ties by name.
func top(counts map[string]int, n int) []string {
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if counts[a] != counts[b] {
			return counts[b] - counts[a]
		}
		return strings.Compare(a, b)
	})
	return keys[:min(n, len(keys))]
}
