package cli

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/phptune/phptune/internal/exitcode"
)

// OpenRunDir is OpenOut for a command that always keeps its results: dir, or when it is empty
// phptune-results/COMMAND-TIME; it returns the directory chosen.
func OpenRunDir(dir, command string) (string, func(), error) {
	if dir == "" {
		dir = filepath.Join("phptune-results", command+"-"+time.Now().Format("20060102-150405"))
	}
	release, err := OpenOut(dir)
	return dir, release, err
}

// OpenOut makes the results directory, checks that files can be written into it, and locks it for this run: a
// second phptune writing into the same directory would interleave its files with ours. The lock is on the
// directory itself (flock), so nothing is left behind; release drops it, and removes the directories it made
// that are still empty (a run that failed before it measured anything leaves no empty results dir). No dir (no
// --out) is nothing to lock.
func OpenOut(dir string) (release func(), err error) {
	if dir == "" {
		return func() {}, nil // no --out: nothing is written
	}
	made := missingDirs(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, exitcode.UsageErrorf("--out %s: %v: give a directory phptune can create", dir, errors.Unwrap(err))
	}
	probe, err := os.CreateTemp(dir, ".phptune-probe-")
	if err != nil {
		return nil, exitcode.UsageErrorf("--out %s: cannot write there (%v): give a writable directory", dir, errors.Unwrap(err))
	}
	probe.Close()
	os.Remove(probe.Name())
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, exitcode.UsageErrorf("--out %s: %v", dir, err)
	}
	if err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		syscall.Close(fd)
		abs, _ := filepath.Abs(dir)
		return nil, exitcode.UsageErrorf("--out %s is in use by another phptune run: wait for it, or give another --out", abs)
	}
	return func() {
		syscall.Close(fd)
		for _, d := range made {
			os.Remove(d) // only an empty one goes
		}
	}, nil
}

// missingDirs are dir and those of its parents that do not exist yet, deepest first.
func missingDirs(dir string) []string {
	var out []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil || d == filepath.Dir(d) {
			return out
		}
		out = append(out, d)
	}
}
