// Package check reads live php-fpm pools, read-only, and says what is wrong with them with the numbers behind
// each finding: it samples each pool's status page (json&full), its workers' memory from /proc, the kernel's
// accept queue of its socket and opcache's state, for a window, and decides nothing by experiment: what it
// suggests is for tune to verify. The one thing it does to a pool is to ask it to run phptune's opcache script,
// placed in a private directory for the length of one request.
package check

import (
	"time"

	"github.com/phptune/phptune/internal/measure"
)

// Schema names the JSON form of a Result.
const Schema = "phptune/check/v1"

// Result is what a check found; its JSON form is the schema phptune/check/v1.
type Result struct {
	Schema      string    `json:"schema"`
	Partial     bool      `json:"partial"` // interrupted before --for ended
	CommandLine []string  `json:"command_line,omitempty"`
	Started     time.Time `json:"started"`
	ElapsedS    float64   `json:"elapsed_s"`
	ForS        float64   `json:"for_s"`      // the window asked for
	IntervalS   float64   `json:"interval_s"` // between samples
	Host        Host      `json:"host"`
	Pools       []*Pool   `json:"pools"`
	// Skipped are pools found or named that could not be sampled, each with why and what would allow it.
	Skipped  []Skipped `json:"skipped,omitempty"`
	Warnings []string  `json:"warnings,omitempty"`
}

// Host is the machine the pools run on.
type Host struct {
	CPUs         int   `json:"cpus"`
	MemTotal     int64 `json:"mem_total"`
	MemAvailable int64 `json:"mem_available"`
}

// Skipped is a pool that was not sampled.
type Skipped struct {
	Pool   string `json:"pool"`
	Target string `json:"target"`
	Why    string `json:"why"`
	Fix    string `json:"fix,omitempty"`
}

// Problems counts the findings of every pool.
func (r *Result) Problems() int {
	n := 0
	for _, p := range r.Pools {
		n += len(p.Findings)
	}
	return n
}

// Pool is one pool's check.
type Pool struct {
	Name       string `json:"name"`
	Network    string `json:"network"`
	Address    string `json:"address"`
	StatusPath string `json:"status_path"`
	MasterPID  int    `json:"master_pid,omitempty"`
	// Config is the php-fpm configuration file read for the pool's settings ("" when none could be).
	Config   string   `json:"config,omitempty"`
	PoolFile string   `json:"pool_file,omitempty"`
	Settings Settings `json:"settings"`
	// App is what the status page showed of the app the pool serves: for the tune command lines.
	App App `json:"app"`

	Samples      int `json:"samples"`       // status pages read
	StatusMissed int `json:"status_missed"` // status reads that got no answer in time
	// StatusFailed counts status reads that failed otherwise (refused, reset), each after a second try;
	// StatusError is the first such failure.
	StatusFailed int     `json:"status_failed,omitempty"`
	StatusError  string  `json:"status_error,omitempty"`
	OwnRequests  int     `json:"own_requests"`  // requests check sent (status and opcache), taken out of Traffic
	QueueSamples int     `json:"queue_samples"` // kernel accept-queue reads
	ElapsedS     float64 `json:"elapsed_s"`

	Traffic Traffic      `json:"traffic"`
	Busy    Busy         `json:"busy"`
	Queue   Queue        `json:"queue"`
	Slow    Slow         `json:"slow"`
	Memory  Memory       `json:"memory"`
	Growth  *Growth      `json:"growth,omitempty"`
	CPU     *CPU         `json:"cpu,omitempty"`
	Opcache OpcacheCheck `json:"opcache"`
	Series  Series       `json:"series"`
	// Held is what /proc showed of the workers while the status page went unanswered (nil when it answered).
	Held *Held `json:"held,omitempty"`

	Findings    []Finding    `json:"findings"`
	Suggestions []Suggestion `json:"suggestions"`
	Notes       []string     `json:"notes,omitempty"`
}

// Settings are the pool's settings as its configuration says; MaxChildren 0 = unknown (the status page does
// not report it: php-src#16221).
type Settings struct {
	PM               string  `json:"pm"`
	MaxChildren      int     `json:"max_children"`
	MaxRequests      int     `json:"max_requests"`
	Backlog          int     `json:"backlog,omitempty"` // the kernel's, for the socket as it is
	SlowlogTimeoutS  float64 `json:"request_slowlog_timeout_s"`
	TerminateTimeout float64 `json:"request_terminate_timeout_s"`
	Known            bool    `json:"known"` // read from the configuration
}

// App is the app a pool serves, as its full status shows it.
type App struct {
	Docroot string   `json:"docroot"` // the directory of the script served most ("DOCROOT" when none was seen)
	Front   string   `json:"front,omitempty"`
	URLs    []string `json:"urls,omitempty"` // the request URIs seen most, up to five, as tune's --url PATH=WEIGHT
}

// Traffic is what the pool served over the window (counter deltas; check's own requests taken out).
type Traffic struct {
	Accepted           int64   `json:"accepted_conn"`
	PerSecond          float64 `json:"per_second"`
	MaxChildrenReached int64   `json:"max_children_reached"`
	// MaxChildrenReachedTotal is php-fpm's count since the pool started: it counts each time the pool reaches
	// the limit, not how long it stays there, so a pool at its limit all through the window adds nothing.
	MaxChildrenReachedTotal int64 `json:"max_children_reached_total"`
	SlowRequests            int64 `json:"slow_requests"`
	Restarts                int   `json:"restarts,omitempty"` // the pool's counters went back (a reload or restart)
}

// Busy is how many workers were taken over the window, from the status page's per-process list (the
// "active processes" counter drifts under keep-alive): every worker not Idle, less the one answering check.
type Busy struct {
	Peak        int     `json:"peak"`
	P95         float64 `json:"p95"`
	Mean        float64 `json:"mean"`
	MaxChildren int     `json:"max_children"`
	// AtLimit is the share of samples with every worker of max_children busy.
	AtLimit float64 `json:"at_limit"`
	// Workers is the most workers the pool ran at once.
	Workers int `json:"workers"`
}

// Queue is the accept queue of the pool's socket: connections waiting for a worker.
type Queue struct {
	Peak    int     `json:"peak"`
	Mean    float64 `json:"mean"`
	Backlog int     `json:"backlog"` // beyond it new connections are refused (unix) or dropped (TCP): 502s
	// NonZero is the share of queue samples with a connection waiting.
	NonZero float64 `json:"nonzero"`
	// MaxListenQueue is php-fpm's own high-water mark when it rose during the window (TCP only), else 0.
	MaxListenQueue int64 `json:"max_listen_queue,omitempty"`
	// StatusWait are the percentiles of the time check's own status requests took, in ms: a request that
	// arrives at a random moment waits about as long for a worker.
	StatusWaitP50 float64 `json:"status_wait_p50_ms"`
	StatusWaitP95 float64 `json:"status_wait_p95_ms"`
	StatusWaitMax float64 `json:"status_wait_max_ms"`
	// WaitLittle is the mean wait for a worker by Little's law (mean queue / accepted per second), ms.
	WaitLittle float64 `json:"wait_littles_law_ms"`
	Source     string  `json:"source"` // "kernel" (sock_diag) or "status" (php-fpm's listen queue)
}

// Slow are the requests seen taking long in the full status.
type Slow struct {
	Threshold float64      `json:"threshold_s"`
	Seen      []SlowRecord `json:"seen,omitempty"` // the slowest, at most ten
}

// SlowRecord is one request seen running long.
type SlowRecord struct {
	URI       string  `json:"uri"`
	Script    string  `json:"script,omitempty"`
	DurationS float64 `json:"duration_s"` // as long as it had run when last seen
	PID       int     `json:"pid"`
}

// Memory is the pool's memory and what it may take at max_children against what it has.
type Memory struct {
	Workers   int   `json:"workers"` // distinct workers measured
	MaxUSS    int64 `json:"max_uss"`
	MeanUSS   int64 `json:"mean_uss"`
	Shared    int64 `json:"shared"` // a worker's RSS - USS (median): counted once for the pool
	MasterUSS int64 `json:"master_uss"`
	// PeakRequest is the largest "last request memory" seen: PHP's own peak for one request.
	PeakRequest int64 `json:"peak_request_memory"`
	// PerWorker is what a worker is counted at: the larger of MaxUSS and PeakRequest.
	PerWorker int64 `json:"per_worker"`
	// Now and Peak are the pool's memory over the window (master + shared once + the workers' USS).
	Now  int64 `json:"now"`
	Peak int64 `json:"peak"`
	// AtMaxChildren is what the pool may take with max_children workers: master + shared + max_children x
	// PerWorker.
	AtMaxChildren int64 `json:"at_max_children"`
	// Limit is the memory the pool has: its cgroup's limit, or the host's; LimitSource says which.
	Limit       int64  `json:"limit"`
	LimitSource string `json:"limit_source"`
	// Budget is what the pool may plan to use: the limit less a reserve for everything else.
	Budget int64 `json:"budget"`
	// Fits is how many workers the budget allows at PerWorker.
	Fits     int    `json:"fits"`
	OOMKills int64  `json:"oom_kills,omitempty"` // in the window, from the cgroup's counters
	Error    string `json:"error,omitempty"`
}

// Growth is the workers' private memory against their request counts over the window.
type Growth struct {
	// PerRequest is the pooled slope, bytes a request, with a one-sided lower bound (z = 3).
	PerRequest float64 `json:"per_request"`
	Lower      float64 `json:"lower"`
	// Shown says the growth is steady: shown above zero, in both halves and in most workers.
	Shown bool `json:"shown"`
	// FirstHalf and SecondHalf are the slopes over the earlier and the later half of each worker's reads: a leak
	// grows in both, a heap that grew once to a new high-water mark in one.
	FirstHalf  float64 `json:"first_half"`
	SecondHalf float64 `json:"second_half"`
	Workers    int     `json:"workers"`  // workers with a series long enough
	Growing    int     `json:"growing"`  // of them, with a positive slope
	Requests   int64   `json:"requests"` // requests the series span, summed over workers
	// Horizon is the requests a worker serves before it is recycled (pm.max_requests), or HorizonNever when
	// never; Projected is PerRequest x Horizon.
	Horizon   int64 `json:"horizon"`
	Projected int64 `json:"projected"`
}

// CPU is the pool's CPU use over the window, against the CPUs the host has.
type CPU struct {
	UsedS float64 `json:"used_s"`
	Cores float64 `json:"cores"` // used / elapsed
	Of    int     `json:"of"`
}

// OpcacheCheck is opcache's state at the start and the end of the window.
type OpcacheCheck struct {
	First *measure.Opcache `json:"first,omitempty"`
	Last  *measure.Opcache `json:"last,omitempty"`
	// Fullest is the read that found opcache at its fullest (a restart empties it: the last read may not be).
	Fullest *measure.Opcache `json:"fullest,omitempty"`
	Reads   int              `json:"reads"`
	// Restarts in the window (out of memory, out of keys) and the hit rate of the window's lookups.
	OOMRestarts   int64   `json:"oom_restarts"`
	HashRestarts  int64   `json:"hash_restarts"`
	WindowHitRate float64 `json:"window_hit_rate"` // percent; 0 with too few lookups
	WindowLookups int64   `json:"window_lookups"`
	// Why is why opcache was not read, and what would allow it.
	Why string `json:"why,omitempty"`
}

// Series are the pool's samples over time, for the report's charts.
type Series struct {
	// Status samples: seconds since the start, busy workers, workers.
	T       []float64 `json:"t"`
	Busy    []int     `json:"busy"`
	Workers []int     `json:"workers"`
	// The pool's memory (bytes) at the samples that read it (seconds since the start): every few seconds, as
	// reading it costs more than the status page (results of before this field: every sample, at T).
	MT     []float64 `json:"memory_t,omitempty"`
	Memory []int64   `json:"memory"`
	// Queue samples (every interval, from the kernel): seconds since the start and connections waiting.
	QT    []float64 `json:"queue_t"`
	Queue []int     `json:"queue"`
}

// Finding is a problem, with its evidence.
type Finding struct {
	ID       string   `json:"id"`
	Title    string   `json:"title"`
	Evidence []string `json:"evidence"`
}

// Suggestion is a change check would make, with the numbers behind it: a suggestion to verify with tune, not a
// verdict.
type Suggestion struct {
	Setting   string `json:"setting"`
	Current   string `json:"current"`
	Suggested string `json:"suggested"`
	Why       string `json:"why"`
	Verify    string `json:"verify"` // the phptune tune command line that would
	Finding   string `json:"finding"`
}
