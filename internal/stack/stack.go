// Package stack serves a PHP application for real: php-fpm pools and nginx, started from configs rendered into a
// private run directory, on loopback, and stopped with every process they started. It never touches system config.
//
// Files: stack.go (a stack's life: start, health, stop), privdir.go (the private directory and who may enter
// it), copy.go (the served copy of the app), fpm.go and nginx.go (each server: its config, its start, its
// health), config.go, find.go (the binaries), check.go (a real installation's files checked), logs.go.
package stack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/phptune/phptune/internal/exitcode"
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

// Stack is a running app: php-fpm, and nginx unless disabled; or Apache in front of php-fpm, or Apache with
// mod_php and no php-fpm (Config.Server).
type Stack struct {
	RunDir  string // configs and logs
	PrivDir string // short private directory: sockets, the served copy of the app, nginx temp files
	Docroot string // the served copy of the app
	Front   string // front controller, relative to Docroot
	HTTPURL string // http://127.0.0.1:PORT/ ("" without an HTTP server)
	Pools   []Endpoint
	FPMBin  string
	// Server is what serves HTTP (ServerNginx, ServerApacheFPM, ServerApacheModPHP; "" without HTTP), MPM
	// Apache's sizes as it runs them.
	Server string
	MPM    MPM
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
	stop    syscall.Signal // the graceful stop
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

// PID returns the master pid of "php-fpm", "nginx" or "apache", or 0: each leads its process group.
func (s *Stack) PID(name string) int {
	for _, p := range s.procs {
		if p.name == name && p.cmd.Process != nil {
			return p.cmd.Process.Pid
		}
	}
	return 0
}

// PHP names the process group whose workers run PHP: "php-fpm", or "apache" under mod_php.
func (s *Stack) PHP() string {
	if s.Server == ServerApacheModPHP {
		return "apache"
	}
	return "php-fpm"
}

// HTTPServer names the process group that serves HTTP: "nginx" or "apache" ("" without one).
func (s *Stack) HTTPServer() string {
	switch s.Server {
	case "":
		return ""
	case ServerNginx:
		return "nginx"
	}
	return "apache"
}

// Groups are the stack's process groups by name (see PID).
func (s *Stack) Groups() map[string]int {
	g := map[string]int{}
	for _, p := range s.procs {
		if p.cmd.Process != nil {
			g[p.name] = p.cmd.Process.Pid
		}
	}
	return g
}

// ServersCPU is the CPU time the stack's servers have used (php-fpm's and nginx's, or Apache's), from the
// scheduler's own clock (nanoseconds, where the sampler's ticks move in steps of 10 ms a process).
func (s *Stack) ServersCPU() (time.Duration, error) {
	var total time.Duration
	for _, pgid := range s.Groups() {
		d, err := measure.GroupCPU(pgid)
		if err != nil {
			return 0, err
		}
		total += d
	}
	return total, nil
}

// ErrorLog is the log of the HTTP server, where PHP's messages end up: "nginx-error.log" or "apache-error.log".
func (s *Stack) ErrorLog() string {
	if s.HTTPServer() == "apache" {
		return "apache-error.log"
	}
	return "nginx-error.log"
}

// LogPath is the path of a log in the run dir: "php-fpm.log", "nginx-error.log", "apache-error.log",
// "php-fpm.out", "nginx.out", "apache.out".
func (s *Stack) LogPath(name string) string { return filepath.Join(s.RunDir, name) }

// LogTail returns up to n last lines of a log in the run dir.
func (s *Stack) LogTail(name string, n int) string { return tail(s.LogPath(name), n) }

// ErrPortTaken is a server's bind failing: another process took the port. Its text is the advice.
var ErrPortTaken = errors.New("pick another port")

// portTries bounds the starts when ports phptune picked are taken between the pick and the bind.
const portTries = 3

// Start renders the configs, copies the app, starts php-fpm and the HTTP server and waits until they answer.
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
	switch {
	case cfg.NoNginx && cfg.Server == ServerApacheModPHP:
		// profile and build speak FastCGI to php-fpm: mod_php has nothing to offer them.
		return nil, exitcode.UsageErrorf("apache-modphp runs PHP inside Apache, with no php-fpm pool to speak FastCGI to")
	case cfg.modPHP():
		if len(cfg.Pools) > 0 {
			return nil, exitcode.UsageErrorf("apache-modphp runs PHP in Apache's processes: it takes no php-fpm pools")
		}
	case len(cfg.Pools) == 0:
		cfg.Pools = DefaultPools()
	}
	if err := cfg.MPM.Validate(); err != nil {
		return nil, exitcode.WithCode(exitcode.Usage, err)
	}
	if cfg.Front == "" {
		cfg.Front = defaultFront
	}
	pools, err := cfg.pools()
	if err != nil {
		return nil, err
	}
	fpmBin, err := FindPHPFPM(cfg.PHPFPM)
	if err != nil {
		return nil, err
	}
	httpBin, err := cfg.findHTTP()
	if err != nil {
		return nil, err
	}
	if httpBin != "" {
		if cfg.HTTPPort != 0 {
			if err := loopback.Available(cfg.HTTPPort); err != nil {
				return nil, exitcode.UsageErrorf("port %d is in use (%v): pick another with --port, or omit it for a free one", cfg.HTTPPort, err)
			}
		}
	}
	if err := cfg.checkApp(); err != nil {
		return nil, err
	}
	w, err := workerUser(cfg.User)
	if err != nil {
		return nil, err
	}
	s, err := newPrivate(cfg, w)
	if s != nil {
		s.FPMBin = fpmBin
		defer func() {
			if err != nil {
				s.Stop(context.Background())
			}
		}()
	}
	if err != nil {
		return nil, err
	}
	if err := s.endpoints(cfg, pools); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(15 * time.Second)
	if len(pools) > 0 {
		if err := s.startFPM(cfg, pools, w); err != nil {
			return nil, err
		}
		if cfg.CheckPHP != nil {
			if err := s.fpmPing(ctx, deadline, s.Pools[0]); err != nil {
				return nil, err
			}
			if err := s.checkPHP(cfg.CheckPHP); err != nil {
				return nil, err
			}
		}
	}
	if httpBin != "" {
		port := cfg.HTTPPort
		if port == 0 {
			if port, err = cfg.pickPort(); err != nil {
				return nil, err
			}
		}
		if cfg.apache() {
			s.Server = cfg.Server
			err = s.startApache(cfg, w, httpBin, port)
		} else {
			s.Server = ServerNginx
			err = s.startNginx(cfg, w, httpBin, port)
		}
		if err != nil {
			return nil, err
		}
		s.HTTPURL = fmt.Sprintf("http://127.0.0.1:%d/", port)
	}
	if err := s.waitHealthy(ctx, deadline); err != nil {
		return nil, err
	}
	if cfg.CheckPHP != nil && len(pools) == 0 {
		if err := s.checkPHP(cfg.CheckPHP); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// ErrCheckPHP wraps what Config.CheckPHP found against a start.
var ErrCheckPHP = errors.New("not in effect")

// checkPHP asks check about the stack's first PHP process.
func (s *Stack) checkPHP(check func(pid int) error) error {
	if err := check(s.PID(s.PHP())); err != nil {
		return fmt.Errorf("%w: %w", ErrCheckPHP, err)
	}
	return nil
}

// findHTTP is the HTTP server's binary ("" with NoNginx).
func (cfg Config) findHTTP() (string, error) {
	switch {
	case cfg.NoNginx:
		return "", nil
	case cfg.apache():
		return FindApache(cfg.Apache)
	case cfg.Server == "" || cfg.Server == ServerNginx:
		return FindNginx(cfg.Nginx)
	}
	return "", exitcode.UsageErrorf("server %q: want %s, %s or %s", cfg.Server, ServerNginx, ServerApacheFPM, ServerApacheModPHP)
}

// pools are cfg's pools with Debian's defaults filled in, each checked.
func (cfg Config) pools() ([]Pool, error) {
	pools := make([]Pool, len(cfg.Pools))
	copy(pools, cfg.Pools)
	for i := range pools {
		pools[i].withDefaults()
		if err := pools[i].validate(); err != nil {
			return nil, exitcode.WithCode(exitcode.Usage, err)
		}
	}
	return pools, nil
}

// checkApp says what is wrong with the app to serve, before anything is created.
func (cfg Config) checkApp() error {
	if cfg.App == "" {
		if cfg.AppFS == nil {
			return exitcode.UsageErrorf("no app given")
		}
		return nil
	}
	st, err := os.Stat(cfg.App)
	if err != nil || !st.IsDir() {
		return exitcode.UsageErrorf("app %s: not a directory: give the docroot of a PHP application", cfg.App)
	}
	if _, err := os.Stat(filepath.Join(cfg.App, cfg.Front)); err != nil {
		return exitcode.UsageErrorf("app %s has no front controller %s: pass --front FILE", cfg.App, cfg.Front)
	}
	return nil
}

// privParent holds the private dirs: the workers must be able to enter it and every directory above it.
const privParent = "/tmp"

// newPrivate makes the stack's private directory (locked down, owned by this process), its run dir and the
// served copy of the app, the writable paths handed to the workers. On an error the stack returned, if any,
// holds what was made, for Stop to remove.
func newPrivate(cfg Config, w workers) (*Stack, error) {
	sweepStale()
	if err := reachable(filepath.Join(privParent, "phptune-*"), w); err != nil {
		return nil, err
	}
	priv, err := os.MkdirTemp(privParent, "phptune-")
	if err != nil {
		return nil, fmt.Errorf("create private dir: %w", err)
	}
	s := &Stack{PrivDir: priv, Front: cfg.Front, exited: make(chan struct{}), fastStop: cfg.FastStop}
	if err := lockDown(priv, w.gid); err != nil {
		return s, err
	}
	if err := os.WriteFile(filepath.Join(priv, OwnerFile), []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
		return s, fmt.Errorf("private dir: %w", err)
	}
	if cfg.RunDir == "" {
		s.RunDir = filepath.Join(priv, "run")
		s.ownRunDir = true
	} else if s.RunDir, err = filepath.Abs(cfg.RunDir); err != nil {
		return s, fmt.Errorf("run dir: %w", err)
	}
	// Configs and logs are read by the masters only, which run as us.
	if err := os.MkdirAll(s.RunDir, 0o700); err != nil {
		return s, fmt.Errorf("create run dir: %w", err)
	}
	s.Docroot = filepath.Join(priv, "app")
	if cfg.App != "" {
		err = copyDir(cfg.App, s.Docroot, cfg.LinkFiles, cfg.Writable)
	} else {
		err = CopyFS(cfg.AppFS, s.Docroot)
	}
	if err != nil {
		return s, fmt.Errorf("copy app: %w", err)
	}
	if err := DateBack(s.Docroot); err != nil {
		return s, fmt.Errorf("copy app: %w", err)
	}
	return s, handOver(s.Docroot, cfg.Writable, w.uid, w.gid)
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
	// Should phptune itself be killed, Pdeathsig sends the master SIGTERM, on which php-fpm, nginx and Apache
	// stop their workers too (a SIGKILLed master would leave them running).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, stop: syscall.SIGQUIT, cmd: cmd, log: logf, done: make(chan struct{})}
	if name == "apache" {
		p.stop = syscall.SIGWINCH // Apache's graceful stop (GracefulShutdownTimeout bounds it); SIGQUIT would kill the parent alone
	}
	s.procs = append(s.procs, p)
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
		s.exitOnce.Do(func() { close(s.exited) })
	}()
	return nil
}

// waitHealthy waits until every pool answers its ping over FastCGI and the HTTP server answers.
func (s *Stack) waitHealthy(ctx context.Context, deadline time.Time) error {
	if err := s.fpmHealthy(ctx, deadline); err != nil {
		return err
	}
	if s.HTTPURL == "" {
		return nil
	}
	name := s.HTTPServer()
	if err := s.apacheHealthy(ctx, deadline); err != nil {
		return fmt.Errorf("%s did not come up: %w", name, err)
	}
	client := &http.Client{Timeout: 2 * time.Second}
	defer client.CloseIdleConnections()
	err := s.poll(ctx, deadline, func(c context.Context) error {
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
			return fmt.Errorf("%s answered %s", name, resp.Status)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("%s did not come up: %w", name, err)
	}
	return nil
}

func (s *Stack) poll(ctx context.Context, deadline time.Time, check func(context.Context) error) error {
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

// Stop stops the HTTP server, then php-fpm: a graceful signal first (SIGQUIT, Apache's SIGWINCH: requests in
// progress finish, and a PGO-instrumented PHP writes its profile), then SIGKILL to the whole process group after a grace period. It
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
		sig := p.stop // graceful: requests finish, and a PGO-instrumented php-fpm writes its profiles
		if s.fastStop {
			sig = syscall.SIGTERM
		}
		procgroup.Stop(ctx, pgid, sig, p.done, 8*time.Second)
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

// Endpoints are the stack's first pools on TCP and on a unix socket (zero Endpoints when it has none: Apache with
// mod_php has no pool, a tune recommendation one).
func (s *Stack) Endpoints() (tcp, unix Endpoint) {
	for _, ep := range s.Pools {
		switch {
		case ep.Network == ListenTCP && tcp.Address == "":
			tcp = ep
		case ep.Network == ListenUnix && unix.Address == "":
			unix = ep
		}
	}
	return tcp, unix
}
