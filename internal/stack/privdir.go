package stack

import (
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/loopback"
)

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

// reachable says, when the workers run as another user, whether they can enter every directory above dir (the
// private dir's parents): one that is closed to them (a root of mode 0700, say) makes every page a 404 that no
// log explains.
func reachable(dir string, w workers) error {
	if w.uid < 0 {
		return nil
	}
	for p := filepath.Dir(dir); ; p = filepath.Dir(p) {
		st, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("private dir %s: %w", dir, err)
		}
		if !canEnter(st, w) {
			return exitcode.UsageErrorf("the workers' user %s cannot enter %s (mode %04o), above the private dir %s: "+
				"let it in (chmod o+x %s) or pass --user with one that may", w.user, p, st.Mode().Perm(), dir, p)
		}
		if p == filepath.Dir(p) {
			return nil
		}
	}
}

// canEnter says whether w may search directory st.
func canEnter(st os.FileInfo, w workers) bool { return may(st, w, 0o1) }

// workers is who runs the servers' workers when phptune runs as root (empty names and -1 ids otherwise: the
// servers keep our user, and their user directives would only warn).
type workers struct {
	user, group string
	uid, gid    int
	groups      []int // the user's other groups, whose bits count as the group's
}

func workerUser(name string) (workers, error) {
	none := workers{uid: -1, gid: -1}
	if os.Geteuid() != 0 {
		return none, nil
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
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if uid == 0 {
			return none, exitcode.UsageErrorf("--user %s: workers must not run as root", n)
		}
		var groups []int
		ids, _ := u.GroupIds()
		for _, id := range ids {
			if g, err := strconv.Atoi(id); err == nil {
				groups = append(groups, g)
			}
		}
		return workers{user: u.Username, group: g.Name, uid: uid, gid: gid, groups: groups}, nil
	}
	return none, exitcode.UsageErrorf("no user %q to run the workers: create it or pass --user NAME", names[0])
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
