package phpbuild

import (
	"context"
	"io"
	"sort"

	"github.com/phptune/phptune/internal/aptinstall"
)

// programPackages maps the programs a build needs to the Debian packages that provide them.
var programPackages = []struct{ prog, pkg string }{
	{"cc", "build-essential"},
	{"make", "build-essential"},
	{"tar", "tar"},
	{"xz", "xz-utils"},
	{"pkg-config", "pkg-config"},
	{"taskset", "util-linux"},
}

// DebInstalled reports whether a Debian package is installed.
func DebInstalled(pkg string) bool { return aptinstall.Installed(pkg) }

// MissingPackages lists the Debian packages that the build needs and that are missing: for the programs, the
// -dev packages of extensions (extra), and valgrind when instructions are counted.
func MissingPackages(extra []string, callgrind bool, lookPath func(string) (string, error), installed func(string) bool) []string {
	miss := map[string]bool{}
	for _, p := range programPackages {
		if _, err := lookPath(p.prog); err != nil {
			miss[p.pkg] = true
		}
	}
	if callgrind {
		if _, err := lookPath("valgrind"); err != nil {
			miss["valgrind"] = true
		}
	}
	for _, p := range extra {
		if !installed(p) {
			miss[p] = true
		}
	}
	out := make([]string, 0, len(miss))
	for p := range miss {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// InstallPackages installs Debian packages with apt-get (for --install-deps), leaving no service of theirs
// running or enabled (aptinstall). It changes no apt source.
func InstallPackages(ctx context.Context, pkgs []string, log io.Writer) error {
	return aptinstall.Install(ctx, pkgs, log)
}
