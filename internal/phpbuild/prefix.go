package phpbuild

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/phptune/phptune/internal/atomicfile"
	"github.com/phptune/phptune/internal/exitcode"
)

// EnsureINI gives an installed prefix a php.ini (in prefix/lib, where PHP built with the default
// --with-config-file-path looks) that loads its opcache.so by absolute path and turns it on, as Debian's packages
// do: `phptune tune --php-fpm <prefix>/sbin/php-fpm` then runs with opcache like the installed PHP.
func EnsureINI(b Binaries) error {
	path := filepath.Join(b.Prefix, "lib", "php.ini")
	if _, err := os.Stat(path); err == nil || b.Opcache == "" {
		return nil
	}
	ini := fmt.Sprintf("; written by phptune build: opcache from this prefix, on as in production\nzend_extension=%s\nopcache.enable=1\n", b.Opcache)
	return writeFileAtomic(path, []byte(ini))
}

// smokeMark records in a prefix that its php-fpm served the demo app correctly: only such prefixes are offered.
const smokeMark = "lib/phptune/smoke-ok"

// MarkSmokeOK records a passed smoke test.
func MarkSmokeOK(prefix string) error {
	return writeFileAtomic(filepath.Join(prefix, smokeMark), []byte("ok\n"))
}

// SmokeOK reports whether a prefix passed its smoke test.
func SmokeOK(prefix string) bool {
	_, err := os.Stat(filepath.Join(prefix, smokeMark))
	return err == nil
}

// WithCached adds the php-fpm binaries of phptune build's cache (those that passed their smoke test) to the ones
// given, after the installed one when none is given: `phptune tune --builds`.
func WithCached(given []string) ([]string, error) {
	dir, err := DefaultCacheDir()
	if err != nil {
		return nil, exitcode.UsageErrorf("--builds: %v", err)
	}
	cached, err := CachedFPMs(dir)
	if err != nil || len(cached) == 0 {
		return nil, exitcode.UsageErrorf("--builds: no smoke-tested builds in %s: run phptune build first", dir)
	}
	if len(given) == 0 {
		given = []string{""} // the installed php-fpm starts
	}
	return append(given, cached...), nil
}

// CachedFPMs lists the php-fpm binaries of the cache's installed variants that passed their smoke test,
// baseline first, then by variant name.
func CachedFPMs(cacheDir string) ([]string, error) {
	ents, err := os.ReadDir(cacheDir)
	if err != nil {
		return nil, fmt.Errorf("build cache %s: %w (build first: phptune build)", cacheDir, err)
	}
	var ms []Manifest
	for _, e := range ents {
		p := filepath.Join(cacheDir, e.Name())
		if m, err := ReadManifest(p); err == nil && SmokeOK(p) {
			ms = append(ms, m)
		}
	}
	sort.SliceStable(ms, func(i, j int) bool {
		if (ms[i].Variant == Baseline) != (ms[j].Variant == Baseline) {
			return ms[i].Variant == Baseline
		}
		return ms[i].Variant+ms[i].Key < ms[j].Variant+ms[j].Key
	})
	var out []string
	for _, m := range ms {
		out = append(out, filepath.Join(m.Prefix, "sbin", "php-fpm"))
	}
	return out, nil
}

func writeFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(path, data, 0o644)
}
