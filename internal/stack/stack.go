// Package stack serves a PHP application for real: php-fpm pools and nginx, started from configs rendered into a
// private run directory, on loopback, and stopped with every process they started. It never touches system config.
package stack

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/phptune/phptune/internal/atomicfile"
	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/fcgi"
	"github.com/phptune/phptune/internal/loopback"
	"github.com/phptune/phptune/internal/measure"
	"github.com/phptune/phptune/internal/phpini"
	"github.com/phptune/phptune/internal/procgroup"
)

// maxSocketPath is the limit of sun_path less its terminating NUL.
const maxSocketPath = 107

// Endpoint is a running pool's address.
type Endpoint struct {
	Name        string
	Network     string // "unix" or "tcp"
	Address     string // socket path or host:port
	PM          string
	MaxChildren int
	StatusPath  string
	PingPath    string
}

// URL is the endpoint in the form `phptune bench` takes, for script (an absolute path).
func (e Endpoint) URL(script string) string {
	if e.Network == ListenUnix {
		return "unix:" + e.Address + ":" + script
	}
	return "fcgi://" + e.Address + script
}

// Stack is a running app: php-fpm, and nginx unless disabled.
type Stack struct {
	RunDir  string // configs and logs
	PrivDir string // short private directory: sockets, the served copy of the app, nginx temp files
	Docroot string // the served copy of the app
	Front   string // front controller, relative to Docroot
	HTTPURL string // http://127.0.0.1:PORT/ ("" without nginx)
	Pools   []Endpoint
	FPMBin  string
	// PHPINI is what php-fpm reads: Debian's shipped defaults for a packaged php-fpm, the same production
	// settings for a build in a prefix of its own (see package phpini).
	PHPINI phpini.Files

	ownRunDir bool
	fastStop  bool
	procs     []*proc
	exited    chan struct{} // closed when any process exits
	exitOnce  sync.Once
	stopOnce  sync.Once
	stopErr   error
}

type proc struct {
	name    string
	cmd     *exec.Cmd
	log     *os.File
	done    chan struct{}
	waitErr error
}

// Script is the absolute path of the front controller in the served copy.
func (s *Stack) Script() string { return filepath.Join(s.Docroot, s.Front) }

// Pool returns the endpoint of the named pool.
func (s *Stack) Pool(name string) (Endpoint, bool) {
	for _, p := range s.Pools {
		if p.Name == name {
			return p, true
		}
	}
	return Endpoint{}, false
}

// Exited is closed when a server process exits before Stop was called.
func (s *Stack) Exited() <-chan struct{} { return s.exited }

// PID returns the master pid of "php-fpm" or "nginx", or 0.
func (s *Stack) PID(name string) int {
	for _, p := range s.procs {
		if p.name == name && p.cmd.Process != nil {
			return p.cmd.Process.Pid
		}
	}
	return 0
}

// LogPath is the path of a log in the run dir: "php-fpm.log", "nginx-error.log", "php-fpm.out", "nginx.out".
func (s *Stack) LogPath(name string) string { return filepath.Join(s.RunDir, name) }

// LogTail returns up to n last lines of a log in the run dir.
func (s *Stack) LogTail(name string, n int) string { return tail(s.LogPath(name), n) }

// ErrPortTaken is a server's bind failing: another process took the port. Its text is the advice.
var ErrPortTaken = errors.New("pick another port")

// portTries bounds the starts when ports phptune picked are taken between the pick and the bind.
const portTries = 3

// Start renders the configs, copies the app, starts php-fpm and nginx and waits until they answer.
// On error everything started is stopped again. A port phptune picked itself that another process takes before
// the server binds it (a race no check can close) costs a new start with new ports, not the run.
func Start(ctx context.Context, cfg Config) (*Stack, error) {
	for try := 1; ; try++ {
		s, err := start(ctx, cfg)
		if err == nil || !errors.Is(err, ErrPortTaken) || cfg.HTTPPort != 0 || try == portTries {
			return s, err
		}
	}
}

func start(ctx context.Context, cfg Config) (_ *Stack, err error) {
	if len(cfg.Pools) == 0 {
		cfg.Pools = DefaultPools()
	}
	if cfg.Front == "" {
		cfg.Front = "index.php"
	}
	pools := make([]Pool, len(cfg.Pools))
	copy(pools, cfg.Pools)
	for i := range pools {
		pools[i].withDefaults()
		if err := pools[i].validate(); err != nil {
			return nil, exitcode.WithCode(exitcode.Usage, err)
		}
	}
	fpmBin, err := FindPHPFPM(cfg.PHPFPM)
	if err != nil {
		return nil, err
	}
	var nginxBin string
	if !cfg.NoNginx {
		if nginxBin, err = FindNginx(cfg.Nginx); err != nil {
			return nil, err
		}
		if cfg.HTTPPort != 0 {
			if err := loopback.Available(cfg.HTTPPort); err != nil {
				return nil, exitcode.UsageErrorf("port %d is in use (%v): pick another with --port, or omit it for a free one", cfg.HTTPPort, err)
			}
		}
	}
	appFS := cfg.AppFS
	if cfg.App != "" {
		st, err := os.Stat(cfg.App)
		if err != nil || !st.IsDir() {
			return nil, exitcode.UsageErrorf("app %s: not a directory: give the docroot of a PHP application", cfg.App)
		}
		if _, err := os.Stat(filepath.Join(cfg.App, cfg.Front)); err != nil {
			return nil, exitcode.UsageErrorf("app %s has no front controller %s: pass --front FILE", cfg.App, cfg.Front)
		}
	} else if appFS == nil {
		return nil, exitcode.UsageErrorf("no app given")
	}

	userName, groupName, uid, gid, err := workerUser(cfg.User)
	if err != nil {
		return nil, err
	}

	sweepStale()
	priv, err := os.MkdirTemp("/tmp", "phptune-")
	if err != nil {
		return nil, fmt.Errorf("create private dir: %w", err)
	}
	s := &Stack{PrivDir: priv, Front: cfg.Front, exited: make(chan struct{}), FPMBin: fpmBin, fastStop: cfg.FastStop}
	defer func() {
		if err != nil {
			s.Stop(context.Background())
		}
	}()
	if err := lockDown(priv, gid); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(priv, OwnerFile), []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
		return nil, fmt.Errorf("private dir: %w", err)
	}
	if cfg.RunDir == "" {
		s.RunDir = filepath.Join(priv, "run")
		s.ownRunDir = true
	} else if s.RunDir, err = filepath.Abs(cfg.RunDir); err != nil {
		return nil, fmt.Errorf("run dir: %w", err)
	}
	// Configs and logs are read by the masters only, which run as us.
	if err := os.MkdirAll(s.RunDir, 0o700); err != nil {
		return nil, fmt.Errorf("create run dir: %w", err)
	}

	s.Docroot = filepath.Join(priv, "app")
	if cfg.App != "" {
		err = copyDir(cfg.App, s.Docroot, cfg.LinkFiles, cfg.Writable)
	} else {
		err = copyFS(appFS, s.Docroot)
	}
	if err != nil {
		return nil, fmt.Errorf("copy app: %w", err)
	}
	if err := DateBack(s.Docroot); err != nil {
		return nil, fmt.Errorf("copy app: %w", err)
	}
	if err := handOver(s.Docroot, cfg.Writable, uid, gid); err != nil {
		return nil, err
	}

	addrs := make([]string, len(pools))
	for i, p := range pools {
		ep := Endpoint{Name: p.Name, Network: p.Listen, PM: p.PM, MaxChildren: p.MaxChildren, StatusPath: p.StatusPath, PingPath: p.PingPath}
		if p.Listen == ListenUnix {
			ep.Address = filepath.Join(priv, p.Name+".sock")
			if len(ep.Address) > maxSocketPath {
				return nil, fmt.Errorf("socket path %s is longer than %d bytes", ep.Address, maxSocketPath)
			}
			addrs[i] = ep.Address
		} else {
			port, err := cfg.pickPort()
			if err != nil {
				return nil, err
			}
			ep.Address = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
			addrs[i] = ep.Address
		}
		s.Pools = append(s.Pools, ep)
	}

	fpmConf := filepath.Join(s.RunDir, "php-fpm.conf")
	if err := writeFileAtomic(fpmConf, []byte(renderFPM(s.RunDir, pools, addrs, userName, groupName))); err != nil {
		return nil, err
	}
	if s.PHPINI, err = phpini.Baseline(fpmBin, s.RunDir); err != nil {
		return nil, err
	}
	args := []string{"-F", "-O", "-y", fpmConf, "-p", s.RunDir}
	if s.PHPINI.INI != "" {
		args = append(args, "-c", s.PHPINI.INI)
	}
	for _, k := range sortedKeys(cfg.Defines) {
		args = append(args, "-d", k+"="+strings.ReplaceAll(cfg.Defines[k], DocrootVar, s.Docroot))
	}
	if cfg.Defines["opcache.preload"] != "" && cfg.Defines["opcache.preload_user"] == "" && userName != "" {
		// A master running as root refuses to preload without a user to run the script as.
		args = append(args, "-d", "opcache.preload_user="+userName)
	}
	if err := s.spawn("php-fpm", s.PHPINI.Env(), fpmBin, args...); err != nil {
		return nil, err
	}

	if nginxBin != "" {
		upstream := s.Pools[0]
		if cfg.NginxPool != "" {
			var ok bool
			if upstream, ok = s.Pool(cfg.NginxPool); !ok {
				return nil, exitcode.UsageErrorf("nginx pool %q: no such pool", cfg.NginxPool)
			}
		}
		up := upstream.Address
		if upstream.Network == ListenUnix {
			up = "unix:" + up
		}
		port := cfg.HTTPPort
		if port == 0 {
			if port, err = cfg.pickPort(); err != nil {
				return nil, err
			}
		}
		for _, t := range []string{"client_body", "fastcgi", "proxy", "uwsgi", "scgi"} {
			d := filepath.Join(priv, "nginx", t)
			if err := os.MkdirAll(d, 0o700); err != nil {
				return nil, fmt.Errorf("nginx temp dir: %w", err)
			}
			if uid >= 0 {
				if err := os.Chown(d, uid, gid); err != nil {
					return nil, fmt.Errorf("nginx temp dir: %w", err)
				}
			}
		}
		conf := renderNginx(nginxVars{RunDir: s.RunDir, PrivDir: priv, Docroot: s.Docroot, Front: cfg.Front, User: userName,
			Upstream: up, Port: port, Workers: cfg.NginxWorkers, Keepalive: cfg.NginxKeepalive, PHP: cfg.NginxPHP})
		nginxConf := filepath.Join(s.RunDir, "nginx.conf")
		if err := writeFileAtomic(nginxConf, []byte(conf)); err != nil {
			return nil, err
		}
		if err := s.spawn("nginx", nil, nginxBin, "-e", filepath.Join(s.RunDir, "nginx-error.log"), "-p", s.RunDir, "-c", nginxConf); err != nil {
			return nil, err
		}
		s.HTTPURL = fmt.Sprintf("http://127.0.0.1:%d/", port)
	}
	if err := s.waitHealthy(ctx, 15*time.Second); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Stack) spawn(name string, env []string, bin string, args ...string) error {
	logf, err := os.OpenFile(filepath.Join(s.RunDir, name+".out"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("%s log: %w", name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Dir = s.RunDir
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	// Own process group: a terminal's Ctrl-C reaches phptune only, which then stops the group in order.
	// Should phptune itself be killed, Pdeathsig sends the master SIGTERM, on which php-fpm and nginx stop
	// their workers too (a SIGKILLed master would leave them running).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, log: logf, done: make(chan struct{})}
	s.procs = append(s.procs, p)
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
		s.exitOnce.Do(func() { close(s.exited) })
	}()
	return nil
}

// waitHealthy waits until every pool answers its ping over FastCGI and nginx answers HTTP.
func (s *Stack) waitHealthy(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for _, ep := range s.Pools {
		params := fcgi.CGIParams(fcgi.CGIOptions{ScriptFilename: ep.PingPath, ScriptName: ep.PingPath, DocumentRoot: "/"})
		if err := s.poll(ctx, deadline, "php-fpm", func(c context.Context) error {
			status, body, _, err := fcgi.Get(c, ep.Network, ep.Address, params)
			if err != nil {
				return err
			}
			if status != 200 || !bytes.Contains(body, []byte("pong")) {
				return fmt.Errorf("ping %s answered %d %q", ep.PingPath, status, body)
			}
			return nil
		}); err != nil {
			return fmt.Errorf("php-fpm pool %s did not come up: %w", ep.Name, err)
		}
		// Every run starts from the same state: a static pool with all its workers forked and idle
		// (right after start-up some are still initialising and the status page lists them as "(null)").
		if ep.PM == "static" {
			if err := s.poll(ctx, deadline, "php-fpm", func(c context.Context) error {
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
	if s.HTTPURL == "" {
		return nil
	}
	client := &http.Client{Timeout: 2 * time.Second}
	defer client.CloseIdleConnections()
	err := s.poll(ctx, deadline, "nginx", func(c context.Context) error {
		req, err := http.NewRequestWithContext(c, http.MethodGet, s.HTTPURL+"phptune-health-check", nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNoContent {
			return fmt.Errorf("nginx answered %s", resp.Status)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("nginx did not come up: %w", err)
	}
	return nil
}

func (s *Stack) poll(ctx context.Context, deadline time.Time, who string, check func(context.Context) error) error {
	var last error
	for {
		c, cancel := context.WithTimeout(ctx, 2*time.Second)
		last = check(c)
		cancel()
		if last == nil {
			return nil
		}
		select {
		case <-s.exited:
			return s.exitError()
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w (logs in %s)", last, s.RunDir)
		}
	}
}

// Died is nil while every server process runs, else what exitError says.
func (s *Stack) Died() error {
	select {
	case <-s.exited:
		return s.exitError()
	default:
		return nil
	}
}

// exitError describes the process that exited, with the line of its log that says why.
func (s *Stack) exitError() error {
	for _, p := range s.procs {
		select {
		case <-p.done:
		default:
			continue
		}
		why := ""
		for _, log := range []string{p.name + ".out", p.name + ".log", p.name + "-error.log"} {
			if t := lastErrorLine(s.LogPath(log)); t != "" {
				why = t
			}
		}
		if why == "" {
			why = fmt.Sprint(p.waitErr) + killedHint(p.waitErr)
		}
		// nginx retries its bind for 2.5 s and then logs "still could not bind()".
		if strings.Contains(why, "Address already in use") || strings.Contains(why, "could not bind") {
			return exitcode.WithCode(exitcode.Usage, fmt.Errorf("%s exited: %s: %w", p.name, why, ErrPortTaken))
		}
		if s.ownRunDir {
			return fmt.Errorf("%s exited: %s", p.name, why) // its logs go with the private dir
		}
		return fmt.Errorf("%s exited: %s (logs in %s)", p.name, why, s.RunDir)
	}
	return errors.New("a server process exited")
}

// killedHint says what to do about a server killed by a signal phptune did not send (it sends SIGQUIT, then
// SIGKILL only while stopping, when no error is reported).
func killedHint(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return " by something outside phptune (the OOM killer? dmesg says): rerun"
		}
	}
	return ""
}

// Stop stops nginx, then php-fpm: a graceful signal first (SIGQUIT: requests in progress finish, and a
// PGO-instrumented PHP writes its profile), then SIGKILL to the whole process group after a grace period. It
// removes the sockets, the private directory and a run dir of its own. Safe to call more than once.
func (s *Stack) Stop(ctx context.Context) error {
	s.stopOnce.Do(func() { s.stopErr = s.stop(ctx) })
	return s.stopErr
}

func (s *Stack) stop(ctx context.Context) error {
	var errs []error
	// Reverse start order: nginx stops taking requests before php-fpm goes.
	for i := len(s.procs) - 1; i >= 0; i-- {
		p := s.procs[i]
		pgid := p.cmd.Process.Pid
		sig := syscall.SIGQUIT // graceful: requests finish, and a PGO-instrumented php-fpm writes its profiles
		if s.fastStop {
			sig = syscall.SIGTERM
		}
		_ = syscall.Kill(pgid, sig)
		select {
		case <-p.done:
		case <-time.After(8 * time.Second):
		case <-ctx.Done():
		}
		// Workers whose master is gone, or a master that did not stop in time.
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-p.done
		if err := procgroup.WaitGone(pgid, 3*time.Second); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", p.name, err))
		}
		p.log.Close()
	}
	if s.PrivDir != "" {
		if err := os.RemoveAll(s.PrivDir); err != nil {
			errs = append(errs, fmt.Errorf("remove %s: %w", s.PrivDir, err))
		}
	}
	return errors.Join(errs...)
}

// OwnerFile, in a private directory, holds the pid of the phptune that made it: a directory whose owner is gone
// (phptune was killed with SIGKILL, which no cleanup survives) is removed by the next stack that starts.
const OwnerFile = "phptune.pid"

// owners maps each phptune private directory to the pid that made it (its OwnerFile).
func owners() map[string]int {
	m := map[string]int{}
	dirs, _ := filepath.Glob("/tmp/phptune-*")
	for _, d := range dirs {
		data, err := os.ReadFile(filepath.Join(d, OwnerFile))
		if err != nil {
			continue // not a stack's, or not ours to judge
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && pid > 0 {
			m[d] = pid
		}
	}
	return m
}

// sweepStale removes private directories whose owner process no longer exists.
func sweepStale() {
	for d, pid := range owners() {
		if syscall.Kill(pid, 0) == syscall.ESRCH {
			os.RemoveAll(d)
		}
	}
}

// OtherRuns are the pids of other live phptune processes serving an app on this machine: their load and ours
// share the CPUs, so a measurement taken meanwhile is slower and noisier.
func OtherRuns() []int {
	seen := map[int]bool{os.Getpid(): true}
	var out []int
	for _, pid := range owners() {
		if !seen[pid] && syscall.Kill(pid, 0) != syscall.ESRCH {
			seen[pid] = true
			out = append(out, pid)
		}
	}
	sort.Ints(out)
	return out
}

// lockDown makes the private directory (the served copy, the sockets) enterable by us and, when we run as root,
// by the workers' group (gid, nginx's and php-fpm's workers): no other local user may read the app's files (its
// .env, say) or reach its sockets.
func lockDown(priv string, gid int) error {
	mode := os.FileMode(0o700)
	if gid >= 0 {
		mode = 0o750
		if err := os.Chown(priv, -1, gid); err != nil {
			return fmt.Errorf("private dir %s: %w", priv, err)
		}
	}
	if err := os.Chmod(priv, mode); err != nil {
		return fmt.Errorf("private dir %s: %w", priv, err)
	}
	return nil
}

func workerUser(name string) (userName, groupName string, uid, gid int, err error) {
	if os.Geteuid() != 0 {
		// php-fpm and nginx keep the current user when not root; the user directives would only warn.
		return "", "", -1, -1, nil
	}
	names := []string{name}
	if name == "" {
		names = []string{"www-data", "nobody"}
	}
	for _, n := range names {
		u, err := user.Lookup(n)
		if err != nil {
			continue
		}
		g, err := user.LookupGroupId(u.Gid)
		if err != nil {
			continue
		}
		uid, _ = strconv.Atoi(u.Uid)
		gid, _ = strconv.Atoi(u.Gid)
		if uid == 0 {
			return "", "", -1, -1, exitcode.UsageErrorf("--user %s: workers must not run as root", n)
		}
		return u.Username, g.Name, uid, gid, nil
	}
	return "", "", -1, -1, exitcode.UsageErrorf("no user %q to run the workers: create it or pass --user NAME", names[0])
}

// handOver gives the workers' user the app's writable paths in the served copy.
func handOver(docroot string, paths []string, uid, gid int) error {
	for _, rel := range paths {
		p := filepath.Join(docroot, filepath.FromSlash(rel))
		if !strings.HasPrefix(p, docroot+string(filepath.Separator)) {
			return exitcode.UsageErrorf("writable path %q is outside the docroot", rel)
		}
		if err := os.MkdirAll(p, 0o755); err != nil {
			return fmt.Errorf("writable path %s: %w", rel, err)
		}
		if uid < 0 {
			continue // not root: the workers run as us and can write already
		}
		err := filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			return os.Lchown(path, uid, gid)
		})
		if err != nil {
			return fmt.Errorf("hand %s to the workers' user: %w", rel, err)
		}
	}
	return nil
}

// pickPort is a free port on loopback (c.portPicker in tests: a port that is taken, to race).
func (c Config) pickPort() (int, error) {
	if c.portPicker != nil {
		return c.portPicker()
	}
	return loopback.FreePort()
}

// DateBack sets the served copy's fresh files an hour into the past: opcache does not cache a file younger
// than opcache.file_update_protection (2 s), so a just-copied app would be compiled afresh by every request
// for the stack's first seconds.
func DateBack(dir string) error {
	now := time.Now()
	past := now.Add(-time.Hour)
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if now.Sub(info.ModTime()) < time.Minute {
			return os.Chtimes(path, past, past)
		}
		return nil
	})
}

// copyFS copies an fs.FS (the embedded demo) into dir, world-readable.
func copyFS(src fs.FS, dir string) error {
	return fs.WalkDir(src, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, filepath.FromSlash(path))
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		data, err := fs.ReadFile(src, path)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
}

// CopyTree copies a docroot as a stack serves it (see copyDir and DateBack).
func CopyTree(src, dir string, link bool, writable []string) error {
	if err := copyDir(src, dir, link, writable); err != nil {
		return err
	}
	return DateBack(dir)
}

// copyDir copies a docroot, following symlinks (Debian's packaged apps link into /etc and /var/lib), into dir,
// world-readable so the workers' user can read it. With link, world-readable files outside the writable paths
// are hard-linked instead when the filesystem allows (large prepared trees cost no copy).
func copyDir(src, dir string, link bool, writable []string) error {
	c := copier{link: link, writable: map[string]bool{}}
	for _, w := range writable {
		c.writable[filepath.Clean(filepath.FromSlash(w))] = true
	}
	return c.copyDirDepth(src, dir, "", 0)
}

type copier struct {
	link     bool
	writable map[string]bool // relative paths whose trees are always copied: the workers get to own them
}

func (c copier) copyDirDepth(src, dst, rel string, depth int) error {
	if depth > 40 {
		return fmt.Errorf("%s: directories nested too deep (a symlink loop?)", src)
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range entries {
		from, to, r := filepath.Join(src, e.Name()), filepath.Join(dst, e.Name()), filepath.Join(rel, e.Name())
		st, err := os.Stat(from) // follows symlinks
		if err != nil {
			continue // a dangling link serves nothing
		}
		switch {
		case st.IsDir():
			if c.writable[r] {
				if err := (copier{}).copyDirDepth(from, to, r, depth+1); err != nil {
					return err
				}
			} else if err := c.copyDirDepth(from, to, r, depth+1); err != nil {
				return err
			}
		case st.Mode().IsRegular():
			if c.link && st.Mode().Perm()&0o004 != 0 && !c.writable[r] {
				// link(2) does not follow a symlink: link its target.
				if real, err := filepath.EvalSymlinks(from); err == nil && os.Link(real, to) == nil {
					continue
				}
			}
			if err := CopyFile(from, to); err != nil {
				return err
			}
		}
	}
	return nil
}

// CopyFile copies one file, world-readable (0644).
func CopyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// writeFileAtomic writes a config or log only we read, whole or not at all.
func writeFileAtomic(path string, data []byte) error {
	if err := atomicfile.Write(path, data, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// lastErrorLine is the last line of a log that reports an error, for one-line messages.
func lastErrorLine(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	last := ""
	for i := len(lines) - 1; i >= 0; i-- {
		l := lines[i]
		if strings.Contains(l, "ERROR") || strings.Contains(l, "[emerg]") || strings.Contains(l, "[alert]") || strings.Contains(l, "[crit]") {
			// php-fpm ends with "FPM initialization failed", which says nothing of why: the line before does.
			if last == "" && strings.Contains(l, "initialization failed") {
				last = strings.TrimSpace(l)
				continue
			}
			return strings.TrimSpace(l)
		}
	}
	return last
}
