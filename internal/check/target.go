package check

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/measure"
	"github.com/phptune/phptune/internal/suggest"
)

// DefaultStatusPath is the status path tried on a socket or an address given without a pool file.
const DefaultStatusPath = "/status"

// Target is one pool to check: where it listens, its status path and what is known of it.
type Target struct {
	Given      string // as the user named it ("" when found running)
	Name       string // the pool's name ("" until its status page says)
	Network    string // "unix" or "tcp"
	Address    string // socket path or HOST:PORT
	StatusPath string
	// Pool is the pool's section of its configuration, when known; Config the file read (the main one).
	Pool      *measure.FPMPoolConfig
	Config    string
	MasterPID int // 0 until found
	// WorkerUID and WorkerGID run the pool's workers (-1 unknown): the opcache script must be readable by them.
	WorkerUID, WorkerGID int
	// unanswered says the preflight's status request got no worker: its connection still waits in the queue.
	unanswered bool
}

func (t Target) String() string {
	if t.Network == "tcp" {
		return "tcp:" + t.Address
	}
	return t.Address
}

// Given is what the command line says of the pools beside the targets.
type Given struct {
	StatusPath string // of sockets and addresses ("": DefaultStatusPath); a path, as pm.status_path is written
	StatusSet  bool   // --fpm-status was given: it overrides the pools' own
	Prefix     string // php-fpm's -p, for relative include= lines ("": guessed, measure.FPMPrefixes)
}

// Resolve turns the command line's targets into pools to check. Each arg is a php-fpm configuration file (a
// pool file, or the main php-fpm.conf with its include= lines: every pool in it), a unix socket (a path, or
// unix:PATH), an address (tcp:HOST:PORT or HOST:PORT) or the name of a running pool. g.StatusPath is the status
// path of sockets and addresses (a running pool's own when it has one), and overrides the files' when
// g.StatusSet. No args: every pool running on the host (found by measure.RunningPools) except phptune's own. A
// pool that cannot be sampled (no pm.status_path) is returned in skipped with what to add; bad input is an
// error (exit 2), g.StatusPath that is not a path too.
func Resolve(args []string, g Given) (targets []Target, skipped []Skipped, err error) {
	g.StatusPath = cmp.Or(g.StatusPath, DefaultStatusPath)
	if !strings.HasPrefix(g.StatusPath, "/") {
		return nil, nil, exitcode.UsageErrorf("--fpm-status %q: want a path starting with /, as pm.status_path is written", g.StatusPath)
	}
	running, runErr := measure.RunningPools(g.Prefix)
	if len(args) == 0 {
		if runErr != nil {
			return nil, nil, fmt.Errorf("find running php-fpm pools: %w", runErr)
		}
		ts, sk, err := discovered(running, g)
		if err == nil && len(ts) == 0 && len(sk) == 0 {
			own := ""
			if n := len(running); n > 0 {
				own = fmt.Sprintf(" but phptune's own (%d pool(s) of its runs, left out)", n)
			}
			return nil, nil, exitcode.UsageErrorf("no php-fpm pool is running here%s: give a pool file, a socket or tcp:HOST:PORT as TARGET", own)
		}
		return ts, sk, err
	}
	for _, a := range args {
		ts, sk, err := resolveOne(a, running, g)
		if err != nil {
			return nil, nil, err
		}
		targets, skipped = append(targets, ts...), append(skipped, sk...)
	}
	for i := range targets {
		link(&targets[i], running, g)
	}
	return targets, skipped, nil
}

func resolveOne(a string, running []measure.RunningPool, g Given) ([]Target, []Skipped, error) {
	t := Target{Given: a, StatusPath: g.StatusPath, WorkerUID: -1, WorkerGID: -1}
	switch {
	case strings.HasPrefix(a, "tcp:"):
		addr := strings.TrimPrefix(a, "tcp:")
		if !isHostPort(addr) {
			return nil, nil, exitcode.UsageErrorf("target %s: want tcp:HOST:PORT, as in tcp:127.0.0.1:9000", a)
		}
		t.Network, t.Address = "tcp", addr
		return []Target{t}, nil, nil
	case strings.HasPrefix(a, "unix:"):
		t.Network, t.Address = "unix", strings.TrimPrefix(a, "unix:")
		return []Target{t}, nil, nil
	}
	st, err := os.Stat(a)
	switch {
	case err == nil && st.Mode()&fs.ModeSocket != 0:
		abs, _ := filepath.Abs(a)
		t.Network, t.Address = "unix", abs
		return []Target{t}, nil, nil
	case err == nil && st.Mode().IsRegular():
		return fromConfig(a, running, g)
	case err == nil:
		return nil, nil, exitcode.UsageErrorf("target %s: not a php-fpm config file nor a socket", a)
	case isHostPort(a):
		t.Network, t.Address = "tcp", a
		return []Target{t}, nil, nil
	}
	// A running pool's name, or a typo of one.
	var names []string
	for _, p := range running {
		if p.Name == a {
			return discovered([]measure.RunningPool{p}, g)
		}
		names = append(names, p.Name)
	}
	if strings.ContainsAny(a, "/.") || !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, exitcode.UsageErrorf("target %s: %v: give a pool file, a socket, tcp:HOST:PORT or a running pool's name", a, errors.Unwrap(err))
	}
	if near := suggest.Phrase(a, names); near != "" {
		return nil, nil, exitcode.UsageErrorf("target %s: no such file, and no running pool of that name%s", a, near)
	}
	return nil, nil, exitcode.UsageErrorf("target %s: no such file and no running pool of that name (running: %s)", a, orNone(names))
}

// fromConfig is every pool of a php-fpm configuration file, its relative includes taken from the prefix given,
// or the running master's that reads it, or the one its place suggests.
func fromConfig(path string, running []measure.RunningPool, g Given) ([]Target, []Skipped, error) {
	abs, _ := filepath.Abs(path)
	prefixes := measure.FPMPrefixes(abs, 0, g.Prefix)
	if i := slices.IndexFunc(running, func(p measure.RunningPool) bool { return p.Config == abs && p.Prefix != "" }); i >= 0 && g.Prefix == "" {
		prefixes = append([]string{running[i].Prefix}, prefixes...)
	}
	cfg, err := measure.ReadFPMConfigFrom(abs, prefixes, nil, nil)
	if err != nil {
		return nil, nil, exitcode.UsageErrorf("%v", err)
	}
	if len(cfg.Pools) == 0 {
		return nil, nil, exitcode.UsageErrorf("%s: no [pool] section: give a pool file or php-fpm.conf with its include= lines", path)
	}
	var ts []Target
	var sk []Skipped
	for _, pc := range cfg.Pools {
		pc := pc
		t := Target{Given: path, Name: pc.Name, Network: pc.Network, Address: pc.Address, Pool: &pc, Config: abs, WorkerUID: -1, WorkerGID: -1}
		switch {
		case pc.Listen == "":
			return nil, nil, exitcode.UsageErrorf("%s: pool [%s] has no listen = line", pc.File, pc.Name)
		case g.StatusSet:
			t.StatusPath = g.StatusPath
		case pc.StatusPath != "":
			t.StatusPath = pc.StatusPath
		default:
			sk = append(sk, noStatusPath(pc, 0))
			continue
		}
		ts = append(ts, t)
	}
	return ts, sk, nil
}

// discovered turns running pools into targets: phptune's own private pools are left out, pools without a
// status path skipped with the fix.
func discovered(running []measure.RunningPool, g Given) ([]Target, []Skipped, error) {
	var ts []Target
	var sk []Skipped
	for _, p := range running {
		if ownPool(p) {
			continue
		}
		t := Target{Name: p.Name, Network: p.Network, Address: p.Address, StatusPath: p.StatusPath, Config: p.Config,
			MasterPID: p.MasterPID, WorkerUID: p.WorkerUID, WorkerGID: p.WorkerGID}
		if p.ConfigError == "" {
			pc := p.FPMPoolConfig
			t.Pool = &pc
		}
		switch {
		case p.ConfigError != "" && !g.StatusSet:
			sk = append(sk, Skipped{Pool: p.Name, Target: fmt.Sprintf("master %d", p.MasterPID),
				Why: "its configuration cannot be read: " + p.ConfigError, Fix: unreadFix(p)})
			continue
		case p.ConfigError != "":
			sk = append(sk, Skipped{Pool: p.Name, Target: fmt.Sprintf("master %d", p.MasterPID),
				Why: "its configuration cannot be read, so where it listens is unknown: " + p.ConfigError, Fix: "name its socket or address as TARGET"})
			continue
		case g.StatusSet:
			t.StatusPath = g.StatusPath
		case p.StatusPath == "":
			sk = append(sk, noStatusPath(p.FPMPoolConfig, p.MasterPID))
			continue
		}
		ts = append(ts, t)
	}
	return ts, sk, nil
}

// unreadFix says what would let check read a running pool whose configuration it cannot: root, where
// permission is what failed; else naming the pool's socket (the error says what else would).
func unreadFix(p measure.RunningPool) string {
	if p.ConfigDenied && os.Geteuid() != 0 {
		return "run as root, or name its socket with --fpm-status"
	}
	return "name its socket or address as TARGET, with --fpm-status"
}

// noStatusPath says what to add to a pool without a status page.
func noStatusPath(pc measure.FPMPoolConfig, master int) Skipped {
	return Skipped{Pool: pc.Name, Target: pc.Listen, Why: "the pool has no pm.status_path, so its status cannot be read",
		Fix: fmt.Sprintf("add pm.status_path = %s to [%s] in %s, then %s", DefaultStatusPath, pc.Name, pc.File, reloadHint(master))}
}

// ownPool tells a pool that a phptune run started (tune, serve, profile: its master is phptune's child) from
// the host's own.
func ownPool(p measure.RunningPool) bool {
	st, err := measure.ReadProc(p.MasterPID)
	if err != nil {
		return false
	}
	comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", st.PPID))
	return err == nil && strings.TrimSpace(string(comm)) == "phptune"
}

// link finds a target's running pool by where it listens: its master, its workers' user and, for a socket or
// an address, its configuration and its status path (unless --fpm-status was given).
func link(t *Target, running []measure.RunningPool, g Given) {
	for _, p := range running {
		if p.Network != t.Network || p.Address != t.Address || p.Address == "" {
			continue
		}
		t.MasterPID, t.WorkerUID, t.WorkerGID = p.MasterPID, p.WorkerUID, p.WorkerGID
		if t.Name == "" {
			t.Name = p.Name
		}
		if t.Pool == nil && p.ConfigError == "" {
			pc := p.FPMPoolConfig
			t.Pool, t.Config = &pc, p.Config
			if !g.StatusSet && pc.StatusPath != "" {
				t.StatusPath = pc.StatusPath
			}
		}
		return
	}
}

// linkByWorker finds the target's master from a worker's parent, when where it listens did not tell (an
// address written another way, a master whose config cannot be read).
func linkByWorker(t *Target, worker int, running []measure.RunningPool) {
	if t.MasterPID != 0 {
		return
	}
	st, err := measure.ReadProc(worker)
	if err != nil {
		return
	}
	for _, p := range running {
		if p.MasterPID == st.PPID && (t.Name == "" || p.Name == t.Name) {
			t.MasterPID, t.WorkerUID, t.WorkerGID = p.MasterPID, p.WorkerUID, p.WorkerGID
			if t.Pool == nil && p.ConfigError == "" {
				pc := p.FPMPoolConfig
				t.Pool, t.Config = &pc, p.Config
			}
			return
		}
	}
}

func isHostPort(s string) bool {
	host, port, err := net.SplitHostPort(s)
	if err != nil || host == "" {
		return false
	}
	n, err := strconv.Atoi(port)
	return err == nil && n > 0 && n < 65536
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
