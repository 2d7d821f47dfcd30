package stack

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

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

// CopyFS copies an fs.FS (the embedded demo) into dir, world-readable: directories 0755, files 0644.
func CopyFS(src fs.FS, dir string) error {
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

// CopyKeep copies src into dst as copyDir does without links, keeping only the relative paths (slash-separated)
// that keep accepts: a packaged app's tree without the files a served copy must not have.
func CopyKeep(src, dst string, keep func(rel string) bool) error {
	return copier{keep: keep}.copyDirDepth(src, dst, "", 0)
}

type copier struct {
	link     bool
	writable map[string]bool       // relative paths whose trees are always copied: the workers get to own them
	keep     func(rel string) bool // nil: all
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
		if c.keep != nil && !c.keep(filepath.ToSlash(r)) {
			continue
		}
		st, err := os.Stat(from) // follows symlinks
		if err != nil {
			continue // a dangling link serves nothing
		}
		switch {
		case st.IsDir():
			if c.writable[r] {
				if err := (copier{keep: c.keep}).copyDirDepth(from, to, r, depth+1); err != nil {
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
