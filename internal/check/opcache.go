package check

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/phptune/phptune/internal/measure"
)

// opcache's memory lives in the master's shared segment: only a request the pool serves can read it. check
// writes phptune's status script into a private directory for one request at a time and removes it after.
//
// The directory is one per workers' group; the script's name is the pool's and the run's (two pools of one
// master, or two checks, each remove their own script: one shared name made one read in five a 404). Its mtime
// is fixed in the future: opcache does not cache a file younger than opcache.file_update_protection (2 s by
// default), and a future mtime is always younger, so the script adds no key to the pool's cache; where the
// protection is off, each check adds one key (opcache_get_status shows them in num_cached_keys).

// probeMtime is the script's fixed modification time.
var probeMtime = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)

// opcacheProbe is where the script goes for one pool.
type opcacheProbe struct {
	dir  string
	name string // the script's: the pool's and this run's
	gid  int    // the directory's group: the workers' (root), or -1
}

// newOpcacheProbe says where the script can go so that the pool's workers, and no other user, can read it, or
// why it cannot and what would allow it.
func newOpcacheProbe(t Target) (*opcacheProbe, string) {
	if t.Pool != nil {
		if root := t.Pool.Setting("chroot", ""); root != "" {
			return nil, fmt.Sprintf("the pool is chrooted to %s, where phptune's private directory is not: opcache's state is read by a "+
				"script the pool runs; check a pool without chroot, or read opcache_get_status() from a script inside %s", root, root)
		}
		if ext := t.Pool.Setting("security.limit_extensions", ".php .phar"); !hasExt(ext, ".php") {
			return nil, fmt.Sprintf("the pool's security.limit_extensions = %s refuses .php scripts; add .php to it to let check read opcache", ext)
		}
	}
	if t.MasterPID > 0 && measure.OtherMountNamespace(t.MasterPID) {
		return nil, "the pool runs in another mount namespace (a container), where phptune's private directory is not: run check inside it"
	}
	uid := os.Geteuid()
	if uid == 0 {
		gid := t.WorkerGID
		if gid < 0 {
			return nil, "the pool's workers were not found, so their group is unknown: the script's directory is readable by that group only"
		}
		p := &opcacheProbe{dir: fmt.Sprintf("/run/phptune-check-%d", gid), name: scriptName(t), gid: gid}
		if reason := underBasedir(t, p.dir); reason != "" {
			return nil, reason
		}
		return p, ""
	}
	if t.WorkerUID >= 0 && t.WorkerUID != uid {
		return nil, fmt.Sprintf("the workers run as uid %d and phptune as %d: a script only they could read needs root; run check as root "+
			"or as the pool's user", t.WorkerUID, uid)
	}
	base := os.Getenv("XDG_RUNTIME_DIR")
	if st, err := os.Stat(base); base == "" || err != nil || !st.IsDir() {
		base = "/tmp"
	}
	p := &opcacheProbe{dir: filepath.Join(base, "phptune-check-"+strconv.Itoa(uid)), name: scriptName(t), gid: -1}
	if reason := underBasedir(t, p.dir); reason != "" {
		return nil, reason
	}
	return p, ""
}

// scriptName is the opcache script's name for the pool and this run: the pool's name, a hash of where it
// listens (pools of one name on two masters) and check's pid.
func scriptName(t Target) string {
	h := fnv.New32a()
	h.Write([]byte(t.Network + " " + t.Address))
	name := strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '_'
	}, t.Name)
	return fmt.Sprintf("phptune-opcache-%.40s-%08x-%d.php", name, h.Sum32(), os.Getpid())
}

// read places the script, asks the pool to run it and removes it again.
func (p *opcacheProbe) read(ctx context.Context, t Target) (*measure.Opcache, error) {
	script, err := p.place()
	if err != nil {
		return nil, err
	}
	defer p.remove(script)
	o, err := measure.ReadOpcache(ctx, t.Network, t.Address, script)
	if err != nil {
		return nil, fmt.Errorf("%w (an open_basedir that leaves out %s, or security.limit_extensions, would refuse it)", err, p.dir)
	}
	return o, nil
}

// place makes the private directory (0750 to the workers' group as root, else 0700) and writes the script into
// it with its fixed mtime.
func (p *opcacheProbe) place() (string, error) {
	mode := os.FileMode(0o700)
	if p.gid >= 0 {
		mode = 0o750
	}
	if err := os.Mkdir(p.dir, mode); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("opcache script directory: %w", err)
	}
	// The directory must be ours and nobody else's, whoever made it first (a stale one of ours is reused).
	st, err := os.Lstat(p.dir)
	if err != nil {
		return "", fmt.Errorf("opcache script directory: %w", err)
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !st.IsDir() || !ok || int(sys.Uid) != os.Geteuid() {
		return "", fmt.Errorf("opcache script directory %s exists and is not phptune's: remove it", p.dir)
	}
	if p.gid >= 0 {
		if err := os.Chown(p.dir, -1, p.gid); err != nil {
			return "", fmt.Errorf("opcache script directory: %w", err)
		}
	}
	if err := os.Chmod(p.dir, mode); err != nil {
		return "", fmt.Errorf("opcache script directory: %w", err)
	}
	script, err := measure.WriteOpcacheScriptAs(filepath.Join(p.dir, p.name))
	if err != nil {
		return "", err
	}
	fileMode := os.FileMode(0o600)
	if p.gid >= 0 {
		fileMode = 0o640
		if err := os.Chown(script, -1, p.gid); err != nil {
			os.Remove(script)
			return "", fmt.Errorf("opcache script: %w", err)
		}
	}
	if err := os.Chmod(script, fileMode); err != nil {
		os.Remove(script)
		return "", fmt.Errorf("opcache script: %w", err)
	}
	if err := os.Chtimes(script, probeMtime, probeMtime); err != nil {
		os.Remove(script)
		return "", fmt.Errorf("opcache script: %w", err)
	}
	return script, nil
}

// remove takes the script and its directory away (another check's script still in it keeps the directory).
func (p *opcacheProbe) remove(script string) {
	os.Remove(script)
	os.Remove(p.dir)
}

// underBasedir says why the pool's open_basedir would refuse a script in dir ("" when it would not).
func underBasedir(t Target, dir string) string {
	if t.Pool == nil {
		return ""
	}
	v, ok := t.Pool.INI("open_basedir")
	if !ok || strings.TrimSpace(v) == "" {
		return ""
	}
	for _, b := range strings.Split(v, ":") {
		b = strings.TrimSpace(b)
		if b != "" && (b == "." || strings.HasPrefix(dir+"/", strings.TrimSuffix(b, "/")+"/")) {
			return ""
		}
	}
	return fmt.Sprintf("the pool's open_basedir = %s leaves out %s, where check puts its opcache script: add %s to it (a reload) "+
		"to let check read opcache", v, dir, dir)
}

func hasExt(list, ext string) bool {
	for _, e := range strings.Fields(list) {
		if strings.EqualFold(e, ext) {
			return true
		}
	}
	return false
}
