package stack

import (
	"os"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/phptune/phptune/internal/exitcode"
)

// CheckServable says what is wrong with a docroot the user gave, before anything starts: not a directory, no
// front controller, or one the workers' user cannot reach and read. phptune copies the app as root and would
// serve its copy all the same, where the server it is tuned for would not serve the docroot at all.
func (cfg Config) CheckServable() error {
	if cfg.Front == "" {
		cfg.Front = defaultFront // as Start serves it
	}
	if err := cfg.checkApp(); err != nil {
		return err
	}
	if cfg.App == "" {
		return nil // an embedded app is copied world-readable
	}
	w, err := workerUser(cfg.User)
	if err != nil {
		return err
	}
	return servable(cfg.App, cfg.Front, w)
}

// servable says whether w may serve docroot's front controller: search every directory down to it and read it.
func servable(docroot, front string, w workers) error {
	if w.uid < 0 {
		return nil // the workers run as us, who read it already
	}
	file, err := filepath.EvalSymlinks(filepath.Join(docroot, front))
	if err != nil {
		return exitcode.UsageErrorf("app %s: %v", docroot, err)
	}
	for p := filepath.Dir(file); ; p = filepath.Dir(p) {
		if st, err := os.Stat(p); err == nil && !may(st, w, 0o1) {
			return exitcode.UsageErrorf("the workers' user %s cannot enter %s (mode %04o), so a server would not serve the app: "+
				"let it in (chmod o+x %s) or pass --user with one that may", w.user, p, st.Mode().Perm(), p)
		}
		if p == filepath.Dir(p) {
			break
		}
	}
	if st, err := os.Stat(file); err == nil && !may(st, w, 0o4) {
		return exitcode.UsageErrorf("the workers' user %s cannot read %s (mode %04o), so a server would not serve the app: "+
			"let it read the docroot (chmod -R o+rX %s) or pass --user with one that may", w.user, file, st.Mode().Perm(), docroot)
	}
	return nil
}

// may says whether w has the permission bit (0o4 read, 0o1 search) on st: its owner's, group's or others' bit, as
// the kernel picks them.
func may(st os.FileInfo, w workers, bit os.FileMode) bool {
	perm := st.Mode().Perm()
	sys, ok := st.Sys().(*syscall.Stat_t)
	switch {
	case !ok:
		return true // not Linux's stat: nothing to judge by
	case int(sys.Uid) == w.uid:
		return perm&(bit<<6) != 0
	case int(sys.Gid) == w.gid || slices.Contains(w.groups, int(sys.Gid)):
		return perm&(bit<<3) != 0
	}
	return perm&bit != 0
}
