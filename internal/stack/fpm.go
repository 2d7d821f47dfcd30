package stack

// The php-fpm part of a stack: its pools, rendered into one php-fpm.conf that php-fpm reads alone (-y), the
// master started with Debian's php.ini baseline, and the pools' health.

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/fcgi"
	"github.com/phptune/phptune/internal/measure"
	"github.com/phptune/phptune/internal/phpini"
)

// Pool is one php-fpm pool. Zero values take Debian's defaults (pm = dynamic, max_children = 5, ...).
type Pool struct {
	Name         string // pool name; also names its socket
	Listen       string // ListenUnix or ListenTCP
	PM           string // static, dynamic or ondemand
	MaxChildren  int
	StartServers int
	MinSpare     int
	MaxSpare     int
	MaxRequests  int
	Backlog      int               // listen.backlog; 0 = php-fpm's default, -1 the kernel's maximum
	StatusPath   string            // pm.status_path; default /fpm-status
	PingPath     string            // ping.path; default /fpm-ping
	AdminValues  map[string]string // php_admin_value[...] of this pool
	Extra        []string          // raw pool directives, one a line, for knobs not modelled here
}

func (p *Pool) withDefaults() {
	if p.PM == "" {
		p.PM = "dynamic"
	}
	if p.MaxChildren == 0 {
		p.MaxChildren = 5
	}
	if p.PM == "dynamic" {
		if p.StartServers == 0 {
			p.StartServers = min(2, p.MaxChildren)
		}
		if p.MinSpare == 0 {
			p.MinSpare = 1
		}
		if p.MaxSpare == 0 {
			p.MaxSpare = max(p.MinSpare, min(3, p.MaxChildren))
		}
	}
	if p.StatusPath == "" {
		p.StatusPath = "/fpm-status"
	}
	if p.PingPath == "" {
		p.PingPath = "/fpm-ping"
	}
}

func (p *Pool) validate() error {
	if p.Name == "" || strings.ContainsAny(p.Name, " []/\n") {
		return fmt.Errorf("pool name %q: use letters, digits, - and _", p.Name)
	}
	switch p.Listen {
	case ListenUnix, ListenTCP:
	default:
		return fmt.Errorf("pool %s: listen %q: want unix or tcp", p.Name, p.Listen)
	}
	switch p.PM {
	case "static", "dynamic", "ondemand":
	default:
		return fmt.Errorf("pool %s: pm %q: want static, dynamic or ondemand", p.Name, p.PM)
	}
	if p.MaxChildren < 1 {
		return fmt.Errorf("pool %s: max_children %d: want at least 1", p.Name, p.MaxChildren)
	}
	if p.PM == "dynamic" && !(p.MinSpare <= p.StartServers && p.StartServers <= p.MaxSpare && p.MaxSpare <= p.MaxChildren) {
		return fmt.Errorf("pool %s: dynamic pm needs min_spare <= start_servers <= max_spare <= max_children (got %d, %d, %d, %d)",
			p.Name, p.MinSpare, p.StartServers, p.MaxSpare, p.MaxChildren)
	}
	return nil
}

// renderFPM renders php-fpm's configuration: one [global] section and a section per pool.
func renderFPM(runDir string, pools []Pool, addrs []string, user, group string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "; written by phptune; php-fpm reads only this file (-y)\n[global]\n")
	fmt.Fprintf(&b, "pid = %s/php-fpm.pid\nerror_log = %s/php-fpm.log\nlog_level = notice\ndaemonize = no\n", runDir, runDir)
	// Bounded graceful stop: children finish their request, or are killed after this.
	b.WriteString("process_control_timeout = 5s\n")
	for i, p := range pools {
		fmt.Fprintf(&b, "\n[%s]\n", p.Name)
		if user != "" {
			fmt.Fprintf(&b, "user = %s\ngroup = %s\n", user, group)
		}
		fmt.Fprintf(&b, "listen = %s\n", addrs[i])
		if p.Listen == ListenUnix {
			// Reachable by nginx's workers (the workers' user when root, else us) and by phptune, nobody else.
			if user != "" {
				fmt.Fprintf(&b, "listen.owner = %s\nlisten.group = %s\nlisten.mode = 0660\n", user, group)
			} else {
				b.WriteString("listen.mode = 0600\n")
			}
		}
		for _, line := range p.Directives() {
			b.WriteString(line + "\n")
		}
		fmt.Fprintf(&b, "pm.status_path = %s\nping.path = %s\n", p.StatusPath, p.PingPath)
		for _, line := range p.Extra {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// Directives are the pool's settings as php-fpm reads them, one a line, from listen.backlog to its
// php_admin_values: the one rendering of a pool's tunable part, for the pools phptune starts and for the files
// tune writes for a real installation (which differ only in where they listen and who runs them).
func (p Pool) Directives() []string {
	var d []string
	if p.Backlog != 0 { // -1: the kernel's maximum
		d = append(d, fmt.Sprintf("listen.backlog = %d", p.Backlog))
	}
	d = append(d, "pm = "+p.PM, fmt.Sprintf("pm.max_children = %d", p.MaxChildren))
	switch p.PM {
	case "dynamic":
		d = append(d, fmt.Sprintf("pm.start_servers = %d", p.StartServers), fmt.Sprintf("pm.min_spare_servers = %d", p.MinSpare),
			fmt.Sprintf("pm.max_spare_servers = %d", p.MaxSpare))
	case "ondemand":
		d = append(d, "pm.process_idle_timeout = 10s") // php-fpm's default, said where a reader looks for it
	}
	d = append(d, fmt.Sprintf("pm.max_requests = %d", p.MaxRequests))
	for _, k := range sortedKeys(p.AdminValues) {
		d = append(d, fmt.Sprintf("php_admin_value[%s] = %s", k, p.AdminValues[k]))
	}
	return d
}

// endpoints gives each pool its address: a socket in the private directory, or a free port on loopback.
func (s *Stack) endpoints(cfg Config, pools []Pool) error {
	for _, p := range pools {
		ep := Endpoint{Name: p.Name, Network: p.Listen, PM: p.PM, MaxChildren: p.MaxChildren, StatusPath: p.StatusPath, PingPath: p.PingPath}
		if p.Listen == ListenUnix {
			ep.Address = filepath.Join(s.PrivDir, p.Name+".sock")
			if len(ep.Address) > maxSocketPath {
				return fmt.Errorf("socket path %s is longer than %d bytes", ep.Address, maxSocketPath)
			}
		} else {
			port, err := cfg.pickPort()
			if err != nil {
				return err
			}
			ep.Address = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		}
		s.Pools = append(s.Pools, ep)
	}
	return nil
}

// startFPM renders php-fpm.conf for the pools at their endpoints and starts the master with Debian's php.ini
// baseline and cfg's defines.
func (s *Stack) startFPM(cfg Config, pools []Pool, w workers) error {
	addrs := make([]string, len(s.Pools))
	for i, ep := range s.Pools {
		addrs[i] = ep.Address
	}
	fpmConf := filepath.Join(s.RunDir, "php-fpm.conf")
	if err := writeFileAtomic(fpmConf, []byte(renderFPM(s.RunDir, pools, addrs, w.user, w.group))); err != nil {
		return err
	}
	var err error
	if s.PHPINI, err = phpini.Baseline(s.FPMBin, s.RunDir); err != nil {
		return err
	}
	args := []string{"-F", "-O", "-y", fpmConf, "-p", s.RunDir}
	if s.PHPINI.INI != "" {
		args = append(args, "-c", s.PHPINI.INI)
	}
	for _, k := range sortedKeys(cfg.Defines) {
		args = append(args, "-d", k+"="+strings.ReplaceAll(cfg.Defines[k], DocrootVar, s.Docroot))
	}
	if cfg.Defines["opcache.preload"] != "" && cfg.Defines["opcache.preload_user"] == "" && w.user != "" {
		// A master running as root refuses to preload without a user to run the script as.
		args = append(args, "-d", "opcache.preload_user="+w.user)
	}
	return s.spawn("php-fpm", s.PHPINI.Env(), s.FPMBin, args...)
}

// fpmPing waits until ep answers its ping over FastCGI.
func (s *Stack) fpmPing(ctx context.Context, deadline time.Time, ep Endpoint) error {
	params := fcgi.CGIParams(fcgi.CGIOptions{ScriptFilename: ep.PingPath, ScriptName: ep.PingPath, DocumentRoot: "/"})
	err := s.poll(ctx, deadline, func(c context.Context) error {
		status, body, _, err := fcgi.Get(c, ep.Network, ep.Address, params)
		if err != nil {
			return err
		}
		if status != 200 || !bytes.Contains(body, []byte("pong")) {
			return fmt.Errorf("ping %s answered %d %q", ep.PingPath, status, body)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("php-fpm pool %s did not come up: %w", ep.Name, err)
	}
	return nil
}

// fpmHealthy waits until every pool answers its ping over FastCGI, and a static pool has all its workers.
func (s *Stack) fpmHealthy(ctx context.Context, deadline time.Time) error {
	for _, ep := range s.Pools {
		if err := s.fpmPing(ctx, deadline, ep); err != nil {
			return err
		}
		// Every run starts from the same state: a static pool with all its workers forked and idle
		// (right after start-up some are still initialising and the status page lists them as "(null)").
		if ep.PM == "static" {
			if err := s.poll(ctx, deadline, func(c context.Context) error {
				st, err := measure.ReadFPMStatus(c, ep.Network, ep.Address, ep.StatusPath)
				if err != nil {
					return err
				}
				ready := 0
				for _, p := range st.Processes {
					if p.State == "Idle" || p.State == "Running" {
						ready++
					}
				}
				if ready < ep.MaxChildren {
					return fmt.Errorf("%d of %d workers ready", ready, ep.MaxChildren)
				}
				return nil
			}); err != nil {
				return fmt.Errorf("php-fpm pool %s did not start its workers: %w", ep.Name, err)
			}
		}
	}
	return nil
}
