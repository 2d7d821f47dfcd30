package phpbuild

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/phptune/phptune/internal/exitcode"
)

// DefaultDebianVersion is the php8.2 source version pinned by default: the one bookworm's main archive serves
// (the security update that Debian's binary packages carry may not be fetchable as source).
const DefaultDebianVersion = "8.2.32-1~deb12u1"

// DebianMirror is the archive the private deb-src list points at.
const DebianMirror = "http://deb.debian.org/debian"

// Source is PHP's source: an upstream tarball or an unpacked tree.
type Source struct {
	Path    string // the tarball (.tar.xz, .tar.gz, .tar.bz2) or the directory
	Dir     bool   // Path is an unpacked tree
	Version string // PHP's version (8.2.32), when known
	Hash    string // sha256 of the tarball, or of the tree's file names, sizes and mtimes
	Origin  string // how it was obtained ("debian php8.2=8.2.32-1~deb12u1", "tarball", "directory")
}

// sourcesFile is the private deb-src list (deb822) that Debian's source packages are fetched through.
func sourcesFile(suite string) string {
	return fmt.Sprintf("Types: deb-src\nURIs: %s\nSuites: %s\nComponents: main\n", DebianMirror, suite)
}

// aptArgs are the options that make apt-get use only the private list and lists directory, never /etc/apt's
// sources nor the system's package lists.
func aptArgs(sourcelist, listsDir string) []string {
	return []string{
		"-o", "Dir::Etc::sourcelist=" + sourcelist,
		"-o", "Dir::Etc::sourceparts=-",
		"-o", "Dir::State::Lists=" + listsDir,
	}
}

// FetchDebian downloads Debian's source package pkg=version (php8.2=8.2.32-1~deb12u1) into cacheDir/sources
// through a private apt configuration and returns its upstream tarball. A tarball already there is reused.
func FetchDebian(ctx context.Context, cacheDir, pkg, version string, log io.Writer) (Source, error) {
	if version == "" {
		version = DefaultDebianVersion
	}
	if strings.ContainsAny(pkg+version, " /\n") || pkg == "" {
		return Source{}, exitcode.UsageErrorf("--debian %q version %q: want a source package name such as php8.2", pkg, version)
	}
	upstream := version
	if i := strings.IndexByte(upstream, '-'); i >= 0 {
		upstream = upstream[:i]
	}
	if i := strings.IndexByte(upstream, ':'); i >= 0 {
		upstream = upstream[i+1:]
	}
	dir := filepath.Join(cacheDir, "sources", pkg+"_"+version)
	tarball := filepath.Join(dir, pkg+"_"+upstream+".orig.tar.xz")
	origin := "debian " + pkg + "=" + version
	if _, err := os.Stat(tarball); err == nil {
		return hashSource(Source{Path: tarball, Version: upstream, Origin: origin})
	}
	if _, err := exec.LookPath("apt-get"); err != nil {
		return Source{}, exitcode.MissingErrorf("--debian needs apt-get (Debian package apt); or pass --source TARBALL|DIR")
	}
	aptDir, err := os.MkdirTemp(cacheDir, ".apt-")
	if err != nil {
		return Source{}, err
	}
	defer os.RemoveAll(aptDir)
	list := filepath.Join(aptDir, "phptune.sources")
	lists := filepath.Join(aptDir, "lists")
	if err := os.MkdirAll(filepath.Join(lists, "partial"), 0o755); err != nil {
		return Source{}, err
	}
	if err := os.WriteFile(list, []byte(sourcesFile("bookworm")), 0o644); err != nil {
		return Source{}, err
	}
	// Download into a temporary directory, then rename: an interrupted download leaves nothing behind.
	dl, err := os.MkdirTemp(cacheDir, ".download-")
	if err != nil {
		return Source{}, err
	}
	defer os.RemoveAll(dl)
	// apt downloads as its _apt user when it can reach the directory.
	_ = os.Chmod(dl, 0o755)
	args := aptArgs(list, lists)
	if err := runLogged(ctx, "", log, "apt-get", append(args, "-q", "update")...); err != nil {
		return Source{}, fmt.Errorf("apt-get update (private deb-src list %s): %w", DebianMirror, err)
	}
	if err := runLogged(ctx, dl, log, "apt-get", append(args, "-q", "source", "--download-only", pkg+"="+version)...); err != nil {
		return Source{}, fmt.Errorf("apt-get source %s=%s: %w (the archive may no longer serve this version: pick one with --debian-version)", pkg, version, err)
	}
	if _, err := os.Stat(filepath.Join(dl, filepath.Base(tarball))); err != nil {
		return Source{}, fmt.Errorf("apt-get source %s=%s gave no %s", pkg, version, filepath.Base(tarball))
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return Source{}, err
	}
	if err := os.Rename(dl, dir); err != nil {
		return Source{}, err
	}
	return hashSource(Source{Path: tarball, Version: upstream, Origin: origin})
}

// LocalSource describes --source PATH: a tarball or an unpacked tree of PHP's sources.
func LocalSource(path string) (Source, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return Source{}, err
	}
	st, err := os.Stat(abs)
	if err != nil {
		return Source{}, exitcode.UsageErrorf("--source %s: %v", path, err)
	}
	if st.IsDir() {
		if _, err := os.Stat(filepath.Join(abs, "main", "php_version.h")); err != nil {
			return Source{}, exitcode.UsageErrorf("--source %s: not a PHP source tree (no main/php_version.h)", path)
		}
		return hashSource(Source{Path: abs, Dir: true, Version: treeVersion(abs), Origin: "directory"})
	}
	if tarFlag(abs) == "" {
		return Source{}, exitcode.UsageErrorf("--source %s: want a .tar.xz, .tar.gz or .tar.bz2 tarball or a directory", path)
	}
	return hashSource(Source{Path: abs, Version: versionFromName(filepath.Base(abs)), Origin: "tarball"})
}

func hashSource(s Source) (Source, error) {
	h := sha256.New()
	if s.Dir {
		// Names, sizes and mtimes: a tree of 100 MB is not read whole on every run.
		var lines []string
		err := filepath.WalkDir(s.Path, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() || strings.HasSuffix(p, ".gcda") {
				return nil
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(s.Path, p)
			lines = append(lines, fmt.Sprintf("%s %d %d", rel, info.Size(), info.ModTime().UnixNano()))
			return nil
		})
		if err != nil {
			return s, fmt.Errorf("hash source tree: %w", err)
		}
		sort.Strings(lines)
		io.WriteString(h, strings.Join(lines, "\n"))
	} else {
		f, err := os.Open(s.Path)
		if err != nil {
			return s, err
		}
		defer f.Close()
		if _, err := io.Copy(h, f); err != nil {
			return s, fmt.Errorf("hash %s: %w", s.Path, err)
		}
	}
	s.Hash = hex.EncodeToString(h.Sum(nil))
	return s, nil
}

func tarFlag(name string) string {
	switch {
	case strings.HasSuffix(name, ".tar.xz"):
		return "-xJf"
	case strings.HasSuffix(name, ".tar.gz"), strings.HasSuffix(name, ".tgz"):
		return "-xzf"
	case strings.HasSuffix(name, ".tar.bz2"):
		return "-xjf"
	}
	return ""
}

// versionFromName finds 8.2.32 in php-8.2.32.tar.xz or php8.2_8.2.32.orig.tar.xz.
func versionFromName(name string) string {
	for _, sep := range []string{"_", "-"} {
		if i := strings.LastIndex(name, sep); i >= 0 {
			v := name[i+1:]
			v = strings.TrimSuffix(v, filepath.Ext(v))
			for _, suf := range []string{".orig.tar", ".tar", ".orig"} {
				v = strings.TrimSuffix(v, suf)
			}
			if v != "" && v[0] >= '0' && v[0] <= '9' {
				return v
			}
		}
	}
	return ""
}

func treeVersion(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, "main", "php_version.h"))
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[1] == "PHP_VERSION" {
			return strings.Trim(f[2], `"`)
		}
	}
	return ""
}

// unpack puts the source tree into dst (which must not exist): tar for a tarball, a copy for a tree.
func unpack(ctx context.Context, s Source, dst string, log io.Writer) error {
	if s.Dir {
		return runLogged(ctx, "", log, "cp", "-a", s.Path, dst)
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	return runLogged(ctx, dst, log, "tar", tarFlag(s.Path), s.Path, "--strip-components=1")
}
