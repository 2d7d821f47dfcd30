package workload

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/procgroup"
)

// Services are an app's own servers while it is served. Stop them on every path.
type Services struct {
	Names  []string
	stops  []func(context.Context) error
	exited <-chan struct{} // closed when a service exits on its own; nil with none
}

// Exited is closed when a service exits before Stop (never, with no services).
func (s *Services) Exited() <-chan struct{} {
	if s == nil {
		return nil
	}
	return s.exited
}

// Stop stops every service, last started first. Safe to call more than once and on a nil *Services.
func (s *Services) Stop(ctx context.Context) error {
	if s == nil {
		return nil
	}
	var errs []error
	for i := len(s.stops) - 1; i >= 0; i-- {
		errs = append(errs, s.stops[i](ctx))
	}
	s.stops, s.Names = nil, nil
	return errors.Join(errs...)
}

// mariaDB is a private MariaDB server: its data dir in the workload directory, its socket in a short
// directory under /tmp that the workers' user can reach (unix socket paths are limited to 107 bytes, and
// /root is mode 700), no TCP. It never touches the system's instance.
type mariaDB struct {
	DataDir  string
	SockDir  string
	LogFile  string
	cmd      *exec.Cmd
	done     chan struct{}
	waitErr  error
	stopping atomic.Bool
	died     chan struct{} // closed when the server exits unasked
}

// Socket is the server's unix socket.
func (m *mariaDB) Socket() string { return filepath.Join(m.SockDir, "mysqld.sock") }

// dbSockDir is the socket directory for a workload directory: fixed, so the app's config can name it, and
// one per workload directory, as one data dir serves one server at a time.
func dbSockDir(workloadDir string) string {
	h := sha256.Sum256([]byte(workloadDir))
	return "/tmp/phptune-db-" + hex.EncodeToString(h[:5])
}

func mariaDBBinaries() (server, install, client string, err error) {
	for _, c := range []struct {
		dst   *string
		names []string
	}{
		{&server, []string{"/usr/sbin/mariadbd", "/usr/sbin/mysqld"}},
		{&install, []string{"/usr/bin/mariadb-install-db", "/usr/bin/mysql_install_db"}},
		{&client, []string{"/usr/bin/mariadb", "/usr/bin/mysql"}},
	} {
		for _, n := range c.names {
			if _, err := os.Stat(n); err == nil {
				*c.dst = n
				break
			}
		}
		if *c.dst == "" {
			return "", "", "", exitcode.MissingErrorf("%s not found: apt-get install --no-install-recommends mariadb-server", filepath.Base(c.names[0]))
		}
	}
	return server, install, client, nil
}

func rootArgs() []string {
	if os.Geteuid() == 0 {
		// mariadbd refuses to run as root unless told; it reads and writes only its private data dir.
		return []string{"--user=root"}
	}
	return nil
}

// initMariaDB creates an empty data dir.
func initMariaDB(ctx context.Context, dataDir string) error {
	_, install, _, err := mariaDBBinaries()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return err
	}
	args := append([]string{"--no-defaults", "--datadir=" + dataDir, "--auth-root-authentication-method=socket", "--skip-test-db"}, rootArgs()...)
	if _, err := run(ctx, "", os.Environ(), install, args...); err != nil {
		return fmt.Errorf("initialise the private MariaDB data dir: %w", err)
	}
	return nil
}

// startMariaDB starts the server on dataDir with its socket in sockDir and waits until it accepts connections.
func startMariaDB(ctx context.Context, dataDir, sockDir, logFile string) (_ *mariaDB, err error) {
	server, _, _, err := mariaDBBinaries()
	if err != nil {
		return nil, err
	}
	m := &mariaDB{DataDir: dataDir, SockDir: sockDir, LogFile: logFile, done: make(chan struct{}), died: make(chan struct{})}
	if c, err := net.DialTimeout("unix", m.Socket(), time.Second); err == nil {
		c.Close()
		return nil, exitcode.UsageErrorf("the private MariaDB of %s is in use (socket %s): another phptune serves this workload; stop it first", dataDir, m.Socket())
	}
	// A directory left by a killed run: ours to clear, unless it is not a plain directory of ours.
	if st, err := os.Lstat(sockDir); err == nil {
		if !st.IsDir() || st.Sys().(*syscall.Stat_t).Uid != uint32(os.Geteuid()) {
			return nil, fmt.Errorf("%s exists and is not a directory of ours: remove it", sockDir)
		}
		if err := os.RemoveAll(sockDir); err != nil {
			return nil, err
		}
	}
	if err := os.Mkdir(sockDir, 0o755); err != nil {
		return nil, fmt.Errorf("socket dir: %w", err)
	}
	defer func() {
		if err != nil {
			m.Stop(context.Background())
		}
	}()
	if err := os.MkdirAll(filepath.Dir(logFile), 0o755); err != nil {
		return nil, err
	}
	args := append([]string{"--no-defaults", "--datadir=" + dataDir, "--socket=" + m.Socket(), "--skip-networking",
		"--pid-file=" + filepath.Join(sockDir, "mysqld.pid"), "--log-error=" + logFile, "--skip-log-bin",
		"--innodb-buffer-pool-size=256M", "--innodb-flush-log-at-trx-commit=2", "--max-connections=500"}, rootArgs()...)
	m.cmd = exec.Command(server, args...)
	// SIGTERM should phptune die: MariaDB shuts down cleanly (no crash recovery on the next start).
	m.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := m.cmd.Start(); err != nil {
		m.cmd = nil
		return nil, fmt.Errorf("start mariadbd: %w", err)
	}
	go func() {
		m.waitErr = m.cmd.Wait()
		close(m.done)
		if !m.stopping.Load() {
			close(m.died)
		}
	}()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if c, err := net.DialTimeout("unix", m.Socket(), time.Second); err == nil {
			c.Close()
			return m, nil
		}
		select {
		case <-m.done:
			return nil, fmt.Errorf("the private MariaDB exited: %v: %s (log %s)", m.waitErr, lastErrorLine(readTail(logFile)), logFile)
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the private MariaDB did not come up in 60 s (log %s)", logFile)
		}
	}
}

// SQL runs statements as the server's root user over the socket.
func (m *mariaDB) SQL(ctx context.Context, stmts string) error {
	_, _, client, err := mariaDBBinaries()
	if err != nil {
		return err
	}
	if _, err := run(ctx, "", os.Environ(), client, "--no-defaults", "--socket="+m.Socket(), "-u", "root", "-e", stmts); err != nil {
		return fmt.Errorf("mariadb: %w", err)
	}
	return nil
}

// Stop shuts the server down cleanly (SIGTERM), killing its group after 30 s, and removes the socket dir.
func (m *mariaDB) Stop(ctx context.Context) error {
	var err error
	if m.cmd != nil {
		m.stopping.Store(true)
		pid := m.cmd.Process.Pid
		if procgroup.Stop(ctx, pid, syscall.SIGTERM, m.done, 30*time.Second) {
			err = errors.New("the private MariaDB did not stop in 30 s: killed")
		}
		m.cmd = nil
	}
	if rerr := os.RemoveAll(m.SockDir); rerr != nil && err == nil {
		err = rerr
	}
	return err
}

func readTail(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	s := string(data)
	if len(s) > 4000 {
		s = s[len(s)-4000:]
	}
	return strings.TrimSpace(s)
}

// lastErrorLine is the log's last line that reports an error, or its last line.
func lastErrorLine(log string) string {
	lines := strings.Split(log, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], "[ERROR]") {
			return strings.TrimSpace(lines[i])
		}
	}
	return strings.TrimSpace(lines[len(lines)-1])
}
