// Package knob holds the tunable dimensions of a PHP stack. A Config is one arm's configuration; a Knob is a
// named dimension that reads and sets one part of it, so that adding a knob touches one file.
package knob

import (
	"encoding/json"
	"fmt"
	"maps"
	"runtime"
	"sort"
	"strings"

	"github.com/phptune/phptune/internal/stack"
)

// Config is what the knobs change: a php-fpm pool, its ini settings and how nginx reaches it.
type Config struct {
	PM          string `json:"pm"`
	MaxChildren int    `json:"max_children"`
	// Spare servers of a dynamic pool; 0 = derived from MaxChildren as Debian's defaults are from 5.
	StartServers int    `json:"start_servers,omitempty"`
	MinSpare     int    `json:"min_spare_servers,omitempty"`
	MaxSpare     int    `json:"max_spare_servers,omitempty"`
	MaxRequests  int    `json:"max_requests"`
	Backlog      int    `json:"backlog,omitempty"` // listen.backlog; 0 = php-fpm's default, -1 the kernel's maximum
	Listen       string `json:"listen"`            // stack.ListenUnix or stack.ListenTCP
	Keepalive    bool   `json:"keepalive"`         // nginx keeps its FastCGI connections to php-fpm
	// FastCGIBuffers is nginx's fastcgi_buffers ("16 16k"); "" = nginx's default.
	FastCGIBuffers string `json:"fastcgi_buffers,omitempty"`
	// PHPFPM is the php-fpm binary; "" = the one tune was given first.
	PHPFPM string `json:"php_fpm,omitempty"`
	// INI settings set per pool (php_admin_value): anything PHP lets a pool set.
	INI map[string]string `json:"ini,omitempty"`
	// Defines are passed to php-fpm as -d: settings only the master reads (opcache's memory, huge pages...).
	Defines map[string]string `json:"defines,omitempty"`
	// Server is the runtime (the knob server): "" for nginx + php-fpm, ApacheFPM or ApacheModPHP.
	Server string `json:"server,omitempty"`
	// Apache is Apache's MPM as the starting point had it (--from-apache): its sizes that the pool does not set.
	// Never changed in place: clones share it.
	Apache *stack.MPM `json:"apache,omitempty"`
}

// Debian is Debian's www pool: pm dynamic with 5 children, a unix socket, nginx without keep-alive, opcache as
// Debian's php.ini leaves it (on).
func Debian() Config {
	return Config{PM: "dynamic", MaxChildren: 5, Listen: stack.ListenUnix}
}

// RuleOfThumb is the folklore "pm static, 2 x cores", for cpus cores (0: the CPUs this process may use).
func RuleOfThumb(cpus int) Config {
	if cpus <= 0 {
		cpus = runtime.NumCPU()
	}
	c := Debian()
	c.PM, c.MaxChildren = "static", 2*cpus
	return c
}

// Clone copies c, maps included.
func (c Config) Clone() Config {
	c.INI = maps.Clone(c.INI)
	c.Defines = maps.Clone(c.Defines)
	return c
}

// SetINI sets a per-pool ini value.
func (c *Config) SetINI(key, value string) {
	if c.INI == nil {
		c.INI = map[string]string{}
	}
	c.INI[key] = value
}

// spares derives a dynamic pool's spare servers the way Debian's 2/1/3 derive from 5 children.
func (c Config) spares() (start, minSpare, maxSpare int) {
	n := c.MaxChildren
	maxSpare, minSpare = c.MaxSpare, c.MinSpare
	if maxSpare == 0 {
		maxSpare = max(1, min(n, (n*3+4)/5))
	}
	if minSpare == 0 {
		minSpare = max(1, n/5)
	}
	minSpare = min(minSpare, maxSpare)
	start = c.StartServers
	if start == 0 {
		start = minSpare + (maxSpare-minSpare)/2
	}
	return max(minSpare, min(start, maxSpare)), minSpare, maxSpare
}

// Pool is the stack pool for this configuration.
func (c Config) Pool(name string) stack.Pool {
	p := stack.Pool{Name: name, Listen: c.Listen, PM: c.PM, MaxChildren: c.MaxChildren, MaxRequests: c.MaxRequests,
		Backlog: c.Backlog, AdminValues: maps.Clone(c.INI)}
	if c.PM == "dynamic" {
		p.StartServers, p.MinSpare, p.MaxSpare = c.spares()
	}
	return p
}

// KeepaliveConns is nginx's upstream keepalive per nginx worker. A kept connection pins a php-fpm worker until
// nginx closes it, and a request that finds every worker pinned waits in php-fpm's backlog: when one nginx
// worker needs more connections than the other workers' idle kept ones leave free, its request stalls until
// nginx's keepalive_timeout or the client's timeout. So all nginx workers together keep at most half the pool.
// Measured (bench/keepstall.sh: static pools of 4, 2 nginx workers, trials of 4 fresh connections): keeping the
// pool's size in all (2 a worker), every one of 100 trials had failed requests (2 each, at the 5 s timeout);
// keeping half (1 a worker), none of 60.
func (c Config) KeepaliveConns(nginxWorkers int) int {
	if !c.Keepalive {
		return 0
	}
	return max(1, c.MaxChildren/(2*max(1, nginxWorkers)))
}

// Apply sets sc's pool, nginx keep-alive and defines to this configuration.
func (c Config) Apply(sc *stack.Config, poolName string) {
	sc.Pools = []stack.Pool{c.Pool(poolName)}
	sc.NginxPool = poolName
	workers := sc.NginxWorkers
	if workers == 0 {
		workers = runtime.NumCPU()
		sc.NginxWorkers = workers
	}
	sc.NginxKeepalive = c.KeepaliveConns(workers)
	sc.Defines = maps.Clone(c.Defines)
	sc.NginxPHP = c.NginxPHP()
	if c.PHPFPM != "" {
		sc.PHPFPM = c.PHPFPM
	}
	c.applyServer(sc)
}

// Location is every directive this configuration puts in nginx's PHP location besides fastcgi_pass.
func (c Config) Location() []string { return stack.LocationDirectives(c.Keepalive, c.NginxPHP()) }

// NginxPHP are the directives this configuration adds to nginx's PHP location.
func (c Config) NginxPHP() []string {
	if c.FastCGIBuffers == "" {
		return nil
	}
	_, size, _ := strings.Cut(c.FastCGIBuffers, " ")
	// The first part of a response goes to fastcgi_buffer_size: the same size as the others.
	return []string{"fastcgi_buffers " + c.FastCGIBuffers, "fastcgi_buffer_size " + strings.TrimSpace(size)}
}

// Key identifies the configuration for sharing a running stack: every field, so that two configurations that
// render differently never share one (String is for people and leaves the spare servers out).
func (c Config) Key() string {
	b, err := json.Marshal(c) // map keys sorted
	if err != nil {
		panic(err) // strings, ints, a bool and string maps always encode
	}
	return string(b)
}

// String is a one-line description, stable for equal configurations.
func (c Config) String() string {
	var parts []string
	if c.PHPFPM != "" {
		parts = append(parts, "php="+c.PHPFPM)
	}
	parts = append(parts, c.serverString()...)
	if c.Server != ApacheModPHP {
		parts = append(parts, c.poolString()...)
	}
	for _, k := range sorted(c.INI) {
		parts = append(parts, k+"="+c.INI[k])
	}
	for _, k := range sorted(c.Defines) {
		parts = append(parts, "-d "+k+"="+c.Defines[k])
	}
	return strings.Join(parts, " ")
}

// poolString is the php-fpm pool's and nginx's part of String.
func (c Config) poolString() []string {
	parts := []string{"pm=" + c.PM, fmt.Sprintf("max_children=%d", c.MaxChildren), "listen=" + c.Listen}
	if c.Server == "" {
		parts = append(parts, "keepalive="+map[bool]string{true: "on", false: "off"}[c.Keepalive])
	}
	if c.MaxRequests > 0 {
		parts = append(parts, fmt.Sprintf("max_requests=%d", c.MaxRequests))
	}
	if c.Backlog != 0 {
		parts = append(parts, fmt.Sprintf("backlog=%d", c.Backlog))
	}
	if c.FastCGIBuffers != "" {
		parts = append(parts, "fastcgi_buffers="+strings.ReplaceAll(c.FastCGIBuffers, " ", "x"))
	}
	return parts
}

func sorted(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
