package clients

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/loopback"
	"github.com/phptune/phptune/internal/procgroup"
	"github.com/phptune/phptune/internal/textline"
)

// Targets phptune can start.
const (
	Tarantool = "tarantool"
	Redis     = "redis"
)

//go:embed init.lua
var initLua []byte

// Server is a private Tarantool or Redis started by phptune on loopback, in its own process group and temp dir.
type Server struct {
	Kind    string
	Host    string
	Port    int
	Version string
	dir     string
	cmd     *exec.Cmd
	logf    *os.File
	done    chan struct{}
	waitErr error
}

// packages names the Debian package that provides each server.
var packages = map[string][2]string{
	Tarantool: {"tarantool", "tarantool"},
	Redis:     {"redis-server", "redis-server"},
}

// Installed checks that kind's server program is on PATH; the error names its Debian package.
func Installed(kind string) error {
	pkg, ok := packages[kind]
	if !ok {
		return exitcode.UsageErrorf("unknown target %q: use tarantool or redis", kind)
	}
	if _, err := exec.LookPath(pkg[0]); err != nil {
		return exitcode.MissingErrorf("%s not found: install the Debian package %s (apt-get install %s)", pkg[0], pkg[1], pkg[1])
	}
	return nil
}

// Start starts a private server of kind on 127.0.0.1:port (0: a free port) and waits until it answers.
func Start(ctx context.Context, kind string, port int) (_ *Server, err error) {
	if err := Installed(kind); err != nil {
		return nil, err
	}
	bin, err := exec.LookPath(packages[kind][0])
	if err != nil {
		return nil, err
	}
	if port == 0 {
		if port, err = loopback.FreePort(); err != nil {
			return nil, err
		}
	} else if err := loopback.Available(port); err != nil {
		return nil, exitcode.UsageErrorf("%s: port %d is taken (%v): choose another port or omit the flag for a free one", kind, port, err)
	}
	dir, err := os.MkdirTemp("", "phptune-"+kind+"-")
	if err != nil {
		return nil, fmt.Errorf("%s: temp dir: %w", kind, err)
	}
	s := &Server{Kind: kind, Host: "127.0.0.1", Port: port, dir: dir, done: make(chan struct{})}
	defer func() {
		if err != nil {
			s.Stop()
		}
	}()
	s.Version = version(bin)
	var args []string
	switch kind {
	case Tarantool:
		init := filepath.Join(dir, "init.lua")
		if err := os.WriteFile(init, initLua, 0o644); err != nil {
			return s, fmt.Errorf("tarantool: %w", err)
		}
		args = []string{init, dir, net.JoinHostPort(s.Host, strconv.Itoa(port))}
	case Redis:
		args = []string{"--port", strconv.Itoa(port), "--bind", s.Host, "--save", "", "--appendonly", "no",
			"--dir", dir, "--daemonize", "no", "--protected-mode", "no", "--logfile", ""}
	}
	if s.logf, err = os.Create(filepath.Join(dir, kind+".log")); err != nil {
		return s, fmt.Errorf("%s: log: %w", kind, err)
	}
	s.cmd = exec.Command(bin, args...)
	s.cmd.Dir = dir
	s.cmd.Stdout, s.cmd.Stderr = s.logf, s.logf
	// Own process group: the terminal's Ctrl-C reaches phptune only, which stops the server itself; Pdeathsig
	// kills it should phptune be killed.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := s.cmd.Start(); err != nil {
		s.cmd = nil
		return s, fmt.Errorf("start %s: %w", kind, err)
	}
	go func() {
		s.waitErr = s.cmd.Wait()
		close(s.done)
	}()
	return s, s.waitReady(ctx, 15*time.Second)
}

// PID is the server's process id (for its CPU time in /proc).
func (s *Server) PID() int { return s.cmd.Process.Pid }

// Exited is closed when the server process has exited.
func (s *Server) Exited() <-chan struct{} { return s.done }

// Addr is host:port.
func (s *Server) Addr() string { return net.JoinHostPort(s.Host, strconv.Itoa(s.Port)) }

// LogTail is the last lines of the server's log.
func (s *Server) LogTail(n int) string {
	b, _ := os.ReadFile(filepath.Join(s.dir, s.Kind+".log"))
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func (s *Server) waitReady(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	var last error
	for {
		select {
		case <-s.done:
			return fmt.Errorf("%s exited at start (%v): %s", s.Kind, s.waitErr, s.LogTail(3))
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		if last = s.ping(); last == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not answer on %s within %s: %v; log: %s", s.Kind, s.Addr(), limit, last, s.LogTail(3))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// ping checks the server speaks its protocol: Tarantool's greeting, Redis's +PONG.
func (s *Server) ping() error {
	c, err := net.DialTimeout("tcp", s.Addr(), time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	r := bufio.NewReader(c)
	if s.Kind == Redis {
		if _, err := c.Write([]byte("PING\r\n")); err != nil {
			return err
		}
		line, err := r.ReadString('\n')
		if err != nil {
			return err
		}
		if line != "+PONG\r\n" {
			return fmt.Errorf("unexpected reply %q", line)
		}
		return nil
	}
	g := make([]byte, 128)
	if _, err := io.ReadFull(r, g); err != nil {
		return err
	}
	if !bytes.HasPrefix(g, []byte("Tarantool")) {
		return fmt.Errorf("unexpected greeting %q", g[:20])
	}
	return nil
}

// Stop stops the server (SIGTERM, then SIGKILL to its group) and removes its temp dir. Safe to call twice.
func (s *Server) Stop() error {
	var errs []error
	if s.cmd != nil {
		pgid := s.cmd.Process.Pid
		procgroup.Stop(context.Background(), pgid, syscall.SIGTERM, s.done, 5*time.Second)
		if err := procgroup.WaitGone(pgid, 3*time.Second); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", s.Kind, err))
		}
		s.cmd = nil
	}
	if s.logf != nil {
		s.logf.Close()
		s.logf = nil
	}
	if s.dir != "" {
		if err := os.RemoveAll(s.dir); err != nil {
			errs = append(errs, err)
		}
		s.dir = ""
	}
	return errors.Join(errs...)
}

func version(bin string) string {
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(textline.First(string(out)))
}
