package measure

// php-fpm takes a relative include= from its prefix: -p, else the prefix it was built with. A running master's
// title shows neither (php-fpm rewrites its command line), so the prefix is guessed from what is seen: the
// main file at PREFIX/etc/php-fpm.conf (where php-fpm looks without -y), the binary at PREFIX/sbin/php-fpm
// (/usr/local/sbin/php-fpm in the official image, /usr/sbin/php-fpm8.2 on Debian), then the two usual ones. A
// guess is taken when the configuration reads whole under it: every include matches and every pool the
// master's workers are titled with is in it.

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/phptune/phptune/internal/fpmconf"
)

// FPMPrefixes are the prefixes to try for the configuration conf of the master pid (0: none known), in order:
// given alone when set.
func FPMPrefixes(conf string, pid int, given string) []string {
	if given != "" {
		return []string{given}
	}
	var out []string
	add := func(p string) {
		if p != "" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	if filepath.Base(conf) == "php-fpm.conf" && filepath.Base(filepath.Dir(conf)) == "etc" {
		add(filepath.Dir(filepath.Dir(conf)))
	}
	if pid > 0 {
		add(exePrefix(pid))
	}
	add(fpmconf.DefaultPrefix)
	add(fpmconf.DockerPrefix)
	return out
}

// exePrefix is PREFIX of a binary at PREFIX/sbin/NAME or PREFIX/bin/NAME ("" when unreadable or elsewhere).
func exePrefix(pid int) string {
	exe, err := os.Readlink(procPath(pid, "exe"))
	if err != nil {
		return ""
	}
	exe = strings.TrimSuffix(exe, " (deleted)") // upgraded under a running master
	if d := filepath.Dir(exe); filepath.Base(d) == "sbin" || filepath.Base(d) == "bin" {
		return filepath.Dir(d)
	}
	return ""
}

// ReadFPMConfigFrom reads path with the first of prefixes under which it reads whole (every include matches,
// every pool of want is in it), else the first under which it reads at all; the error is the first prefix's.
func ReadFPMConfigFrom(path string, prefixes []string, env func(string) string, want []string) (*FPMConfig, error) {
	var first *FPMConfig
	var firstErr error
	for _, p := range prefixes {
		c, err := readFPMConfig(path, fpmconf.Options{Prefix: p, Env: env})
		switch {
		case err != nil:
			firstErr = cmpErr(firstErr, err)
		case whole(c, want):
			return c, nil
		case first == nil:
			first = c
		}
	}
	if first != nil {
		return first, nil
	}
	return nil, firstErr
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// whole says c matched every include and has every pool of want.
func whole(c *FPMConfig, want []string) bool {
	for _, w := range c.Warnings {
		if strings.Contains(w, "nothing matches include=") {
			return false
		}
	}
	for _, name := range want {
		if _, ok := c.Pool(name); !ok {
			return false
		}
	}
	return true
}
