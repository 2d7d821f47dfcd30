package phpbuild

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"sort"
	"strings"
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
func DebInstalled(pkg string) bool {
	out, err := exec.Command("dpkg-query", "-W", "-f=${Status}", pkg).Output()
	return err == nil && strings.Contains(string(out), "ok installed")
}

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

// InstallPackages installs Debian packages with apt-get (for --install-deps). It changes no apt source.
func InstallPackages(ctx context.Context, pkgs []string, log io.Writer) error {
	if len(pkgs) == 0 {
		return nil
	}
	args := append([]string{"install", "-y", "-q", "--no-install-recommends"}, pkgs...)
	if err := runEnv(ctx, "", append(environ(), "DEBIAN_FRONTEND=noninteractive"), log, "apt-get", args...); err != nil {
		return fmt.Errorf("apt-get install %s: %w", strings.Join(pkgs, " "), err)
	}
	return nil
}
