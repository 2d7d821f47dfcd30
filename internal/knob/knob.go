package knob

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/phptune/phptune/internal/exitcode"
)

// Knob is one tunable dimension of a Config.
type Knob struct {
	Name string
	Doc  string
	// Candidates are the values worth trying given the current best (the current value among them is skipped).
	Candidates func(cur Config) []string
	Get        func(c Config) string
	Set        func(c *Config, v string) error
	// CPUOnly knobs change only the work PHP does per request (instructions, syscalls), not the pool, nginx or
	// memory layout: counting that work screens them before any timed trial, and they are decided on php-fpm's
	// CPU time per request.
	CPUOnly bool
	// CPUTime knobs change what a request costs in CPU time without changing the work counted (huge pages,
	// the binary's code layout), or in a way a count does not show (the JIT): decided on CPU time per request,
	// never screened.
	CPUTime bool
	// Pool knobs shape php-fpm's pool (pm, max_children): raced on the configuration's own pool. The other
	// throughput knobs (transport, keep-alive, buffers) are raced on its steady twin, a static pool of its size.
	Pool bool
	// Tail knobs' values may trade throughput for tail latency (how requests wait for a worker: the runtime, the
	// pool's manager, kept connections, the listen queue): their races take a value better on goodput only if its
	// p99 is not shown worse.
	Tail bool
	// Load, when set, is the connections a comparison of value c needs, given tune's load conc (a pool-size
	// comparison must be able to fill the largest pool).
	Load func(conc int, c Config) int
	// Check, when set, says whether a candidate took effect in a running php-fpm (its master's pid), with a
	// note for the report; an error says why it did not. Starts that did not take effect are retried.
	Check func(fpmPID int) (note string, err error)
	// Skip, when set, says why the knob is not worth a trial for this app and host ("" = try it).
	Skip func(f Facts, cur Config) string
	// Suggest, when set, gives the candidates from what was measured, in place of Candidates.
	Suggest func(f Facts, cur Config) []string
	// Show, when set, says what a value means where the value itself misleads a reader (backlog 0 is php-fpm's
	// 511); Shown applies it.
	Show func(v string) string
	// Soak knobs bound what a worker grows to over hours (pm.max_requests): tune decides them from the workers'
	// memory growth per request in a long series of requests, not by a race on throughput, unless the user
	// names values to race.
	Soak bool
}

// Shown is value v of the knob named name as a reader should read it: what a default stands for, "(unset)"
// for an ini setting left unset.
func Shown(name, v string) string {
	if k, ok := ByName(name); ok && k.Show != nil {
		return k.Show(v)
	}
	if v == "" {
		return "(unset)"
	}
	return v
}

// orDefault shows the empty value as the default it stands for.
func orDefault(def string) func(string) string {
	return func(v string) string {
		if v == "" {
			return "default (" + def + ")"
		}
		return v
	}
}

// Values are the candidates of k given the facts.
func (k Knob) Values(f Facts, cur Config) []string {
	if k.Suggest != nil {
		return k.Suggest(f, cur)
	}
	return k.Candidates(cur)
}

// Facts are what tune learned about the app and the host before deciding knobs.
type Facts struct {
	MaxResponse int64  `json:"max_response_bytes"` // largest response seen, bytes
	Concurrency int    `json:"concurrency"`        // connections the comparisons use
	THP         string `json:"thp"`                // transparent huge pages mode: always, madvise or never
	HugePages   int    `json:"nr_hugepages"`       // reserved huge pages (vm.nr_hugepages)
	// RealpathUsed and RealpathLimit are the realpath cache's use and size in a worker (0 = not read).
	RealpathUsed  int64 `json:"realpath_cache_used"`
	RealpathLimit int64 `json:"realpath_cache_limit"`
	// Opcache is opcache's state in a worker once every URL was served (nil = not read, or opcache off).
	Opcache *OpcacheUse `json:"opcache,omitempty"`
	// NginxWorkers is nginx's worker_processes in the stacks (0 = not known).
	NginxWorkers int `json:"nginx_workers,omitempty"`
}

// OpcacheUse is the part of opcache_get_status() that sizes opcache's memory.
type OpcacheUse struct {
	MemoryUsed   int64   `json:"memory_used"`
	MemoryFree   int64   `json:"memory_free"`
	MemoryWasted int64   `json:"memory_wasted"`
	InternedUsed int64   `json:"interned_strings_used"`
	InternedFree int64   `json:"interned_strings_free"`
	Keys         int64   `json:"cached_keys"`
	MaxKeys      int64   `json:"max_cached_keys"`
	CacheFull    bool    `json:"cache_full"`
	HitRate      float64 `json:"hit_rate"`
}

// Core are the knobs tune decides by default, in the order it tries them: each is decided with the best of
// those before it in place (greedy coordinate ascent).
func Core() []Knob {
	return []Knob{Opcache(), PM(), Listen(), Keepalive()}
}

// All are the knobs tune decides by default, most telling first: when the budget cannot cover them all, the
// last are left out (and the report says so). preload and the binaries depend on the app and the command line.
func All(preloadScript string, binaries []string) []Knob {
	return []Knob{Binary(binaries), Opcache(), JIT(), PM(), Listen(), Keepalive(), Preload(preloadScript),
		ValidateTimestamps(), OpcacheMemory(), HugeCodePages(), MaxRequests(), FastCGIBuffers(), RealpathCache(), Backlog()}
}

// ByName finds a knob by name: the core ones, max_children, and the ones only tried when asked for.
func ByName(name string) (Knob, bool) {
	return byName(nil, name)
}

// byName finds name among known (nil: All without an app's preload script or binaries) and MaxChildren.
func byName(known []Knob, name string) (Knob, bool) {
	if known == nil {
		known = All("", nil)
	}
	for _, k := range append(known, MaxChildren(), Server("")) {
		if k.Name == name {
			return k, true
		}
	}
	return Knob{}, false
}

// Fixed restricts a knob to the given values: the user's --knob NAME=V1,V2,... For a name that is no known knob,
// the knob is the per-pool ini setting of that name (prefix "ini:" to force that reading).
func Fixed(name string, values []string) (Knob, error) {
	return FixedIn(nil, name, values)
}

// FixedIn is Fixed among the knobs of an app (All with its preload script and binaries): preload=on then
// names the app's own script.
func FixedIn(known []Knob, name string, values []string) (Knob, error) {
	if len(values) == 0 {
		return Knob{}, exitcode.UsageErrorf("--knob %s: give values, as in --knob %s=V1,V2", name, name)
	}
	k, ok := byName(known, name)
	if !ok || strings.HasPrefix(name, "ini:") {
		k = INI(strings.TrimPrefix(name, "ini:"))
	}
	for _, v := range values {
		var c Config = Debian()
		if err := k.Set(&c, v); err != nil {
			return Knob{}, exitcode.UsageErrorf("--knob %s: %v", name, err)
		}
	}
	vals := append([]string(nil), values...)
	k.Candidates = func(Config) []string { return vals }
	// Values the user names are tried: neither a suggestion from what was measured nor a rule that the knob cannot
	// matter here (backlog below 511 waiting connections) overrides them.
	k.Suggest, k.Skip, k.Soak = nil, nil, false
	return k, nil
}

// toggle is a knob whose values are on and off, tried in the order given.
func toggle(name, doc string, order []string, on func(Config) bool, set func(c *Config, on bool) error) Knob {
	return Knob{
		Name:       name,
		Doc:        doc,
		Candidates: func(Config) []string { return order },
		Get: func(c Config) string {
			if on(c) {
				return "on"
			}
			return "off"
		},
		Set: func(c *Config, v string) error {
			if v != "on" && v != "off" {
				return fmt.Errorf("%s %q: want on or off", name, v)
			}
			return set(c, v == "on")
		},
	}
}

// Opcache switches the opcode cache on or off for the pool.
func Opcache() Knob {
	k := toggle("opcache", "opcache.enable: compiled scripts cached in shared memory instead of compiled on every request",
		[]string{"on", "off"},
		func(c Config) bool { return c.INI["opcache.enable"] != "0" },
		func(c *Config, on bool) error {
			c.SetINI("opcache.enable", map[bool]string{true: "1", false: "0"}[on])
			return nil
		})
	k.CPUOnly = true
	return k
}

// PM is php-fpm's process manager.
func PM() Knob {
	return Knob{
		Name:       "pm",
		Pool:       true,
		Tail:       true, // ondemand forks a worker when a request waits
		Doc:        "pm: static keeps max_children workers; dynamic keeps spare workers between bounds; ondemand forks per demand",
		Candidates: func(Config) []string { return []string{"static", "dynamic", "ondemand"} },
		Get:        func(c Config) string { return c.PM },
		Set: func(c *Config, v string) error {
			switch v {
			case "static", "dynamic", "ondemand":
				c.PM = v
				return nil
			}
			return fmt.Errorf("pm %q: want static, dynamic or ondemand", v)
		},
	}
}

// ladder are the pool sizes tried: roughly geometric, so that neighbours differ by a third to a half.
var ladder = []int{1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256}

// Neighbours are the ladder's sizes just below and above n.
func Neighbours(n int) []int {
	var below, above int
	for _, v := range ladder {
		if v < n {
			below = v
		}
		if v > n && above == 0 {
			above = v
		}
	}
	if above == 0 {
		above = n + n/2
	}
	var out []int
	if below > 0 {
		out = append(out, below)
	}
	return append(out, above)
}

// Ladder is the sizes of the pool-size ladder from lo to hi.
func Ladder(lo, hi int) []int {
	var out []int
	for _, v := range ladder {
		if v >= lo && v <= hi {
			out = append(out, v)
		}
	}
	return out
}

// MaxChildren is pm.max_children; tune sizes it from the saturation sweep and memory, then checks the
// neighbours.
func MaxChildren() Knob {
	return Knob{
		Name: MaxChildrenName,
		Pool: true,
		Doc:  "pm.max_children: the most requests PHP serves at once",
		Candidates: func(c Config) []string {
			var out []string
			for _, n := range Neighbours(c.MaxChildren) {
				out = append(out, strconv.Itoa(n))
			}
			return out
		},
		Get:  func(c Config) string { return strconv.Itoa(c.MaxChildren) },
		Load: func(conc int, c Config) int { return max(conc, c.MaxChildren) },
		Set: func(c *Config, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 10000 {
				return fmt.Errorf("max_children %q: want a whole number from 1 to 10000", v)
			}
			c.MaxChildren = n
			return nil
		},
	}
}

// Listen is how nginx reaches php-fpm.
func Listen() Knob {
	return Knob{
		Name:       "listen",
		Doc:        "listen: php-fpm on a unix socket or on TCP loopback",
		Candidates: func(Config) []string { return []string{"unix", "tcp"} },
		Get:        func(c Config) string { return c.Listen },
		Set: func(c *Config, v string) error {
			switch v {
			case "unix", "tcp":
				c.Listen = v
				return nil
			}
			return fmt.Errorf("listen %q: want unix or tcp", v)
		},
	}
}

// The names of the knobs that other packages single out.
const (
	KeepaliveName   = "keepalive"
	MaxChildrenName = "max_children"
)

// Keepalive is nginx keeping its FastCGI connections to php-fpm (upstream keepalive, fastcgi_keep_conn).
func Keepalive() Knob {
	k := toggle(KeepaliveName, "nginx upstream keepalive with fastcgi_keep_conn: no connect per request, but each kept connection holds a worker",
		[]string{"off", "on"},
		func(c Config) bool { return c.Keepalive },
		func(c *Config, on bool) error { c.Keepalive = on; return nil })
	// Every nginx worker keeps at least one connection, and together they must leave half the pool free
	// (Config.KeepaliveConns): a smaller pool stalls requests (bench/keepstall.sh, a pool of 2: every trial).
	k.Skip = func(f Facts, cur Config) string {
		if w := f.NginxWorkers; w > 0 && cur.MaxChildren < 2*w && !cur.Keepalive {
			return fmt.Sprintf("a pool of %d cannot keep a connection for each of nginx's %d workers and half its workers free (a kept connection pins a worker, and requests then stall)", cur.MaxChildren, w)
		}
		return ""
	}
	k.Tail = true // a kept connection pins a worker: others may wait for it
	return k
}

// INI is any per-pool ini setting (php_admin_value[KEY]); the empty value leaves it unset.
func INI(key string) Knob {
	return Knob{
		Name: key,
		Doc:  "ini setting " + key,
		// A pool's ini setting changes only what PHP does for a request: its instructions and system calls.
		CPUOnly:    true,
		Candidates: func(Config) []string { return nil },
		Get:        func(c Config) string { return c.INI[key] },
		Set: func(c *Config, v string) error {
			if key == "" || strings.ContainsAny(key, " =[]\n") {
				return fmt.Errorf("ini key %q: not a valid setting name", key)
			}
			if strings.ContainsAny(v, "\n") {
				return fmt.Errorf("ini value %q: one line only", v)
			}
			if v == "" {
				delete(c.INI, key)
				return nil
			}
			c.SetINI(key, v)
			return nil
		},
	}
}
