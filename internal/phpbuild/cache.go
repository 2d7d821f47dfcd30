package phpbuild

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/phptune/phptune/internal/textline"
)

// DefaultCacheDir is $XDG_CACHE_HOME/phptune/builds, or ~/.cache/phptune/builds.
func DefaultCacheDir() (string, error) {
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("no cache directory: set XDG_CACHE_HOME or HOME: %w", err)
		}
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "phptune", "builds"), nil
}

// KeyInputs is everything a variant's binaries depend on. Two requests with the same inputs share a build.
type KeyInputs struct {
	Source    string   `json:"source"`    // Source.Hash
	Variant   string   `json:"variant"`   // baseline, pgo...
	Configure []string `json:"configure"` // configure arguments without --prefix
	ProfFlags string   `json:"prof_flags,omitempty"`
	Compiler  string   `json:"compiler"` // `cc --version`'s first line
	Training  string   `json:"training,omitempty"`
	Tools     string   `json:"tools,omitempty"` // post-link tools and their flags (pgo+bolt)
}

// keySchema changes when the build recipe itself changes, so old prefixes are not mistaken for new ones.
const keySchema = "phptune-build-key/1"

// Key is a short hex hash of the inputs.
func Key(in KeyInputs) string {
	b, _ := json.Marshal(struct {
		Schema string `json:"schema"`
		KeyInputs
	}{keySchema, in})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:16]
}

// PrefixDir is where the variant with key is installed inside the cache.
func PrefixDir(cacheDir, variant, key string) string {
	return filepath.Join(cacheDir, strings.ReplaceAll(variant, "+", "-")+"-"+key)
}

// CompilerVersion is the first line of `$CC --version` (cc by default).
func CompilerVersion(ctx context.Context) (string, error) {
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "cc"
	}
	out, err := exec.CommandContext(ctx, cc, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("%s --version: %w", cc, err)
	}
	return strings.TrimSpace(textline.First(string(out))), nil
}

// ManifestName is the file in each installed prefix that describes it. A prefix appears whole, by rename, with
// its manifest already inside.
const ManifestName = "phptune-build.json"

// Manifest describes an installed variant.
type Manifest struct {
	Schema    string    `json:"schema"`
	Variant   string    `json:"variant"`
	Key       string    `json:"key"`
	Prefix    string    `json:"prefix"`
	Inputs    KeyInputs `json:"inputs"`
	Version   string    `json:"php_version"`
	Origin    string    `json:"origin"`
	Seconds   float64   `json:"build_seconds"`
	Steps     []Step    `json:"steps"`
	Warnings  []string  `json:"warnings,omitempty"`
	LogDir    string    `json:"log_dir"`
	GuardPath string    `json:"guard"` // Zend/bench.php from the same source, copied into the prefix
}

// Step is one timed step of a build.
type Step struct {
	Name    string  `json:"name"`
	Seconds float64 `json:"seconds"`
}

// ReadManifest reads an installed prefix's manifest.
func ReadManifest(prefix string) (Manifest, error) {
	var m Manifest
	b, err := os.ReadFile(filepath.Join(prefix, ManifestName))
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("%s: %w", filepath.Join(prefix, ManifestName), err)
	}
	return m, nil
}

// Binaries are an installed prefix's programs.
type Binaries struct {
	Prefix  string
	FPM     string // sbin/php-fpm
	CGI     string // bin/php-cgi
	Opcache string // absolute path of opcache.so ("" when built in)
	Guard   string // bench.php from the same source
}

// PrefixBinaries finds the programs of an installed prefix.
func PrefixBinaries(prefix string) (Binaries, error) {
	b := Binaries{Prefix: prefix, FPM: filepath.Join(prefix, "sbin", "php-fpm"), CGI: filepath.Join(prefix, "bin", "php-cgi"),
		Guard: filepath.Join(prefix, "lib", "phptune", "bench.php")}
	for _, p := range []string{b.FPM, b.CGI} {
		if _, err := os.Stat(p); err != nil {
			return b, fmt.Errorf("prefix %s has no %s", prefix, p)
		}
	}
	if m, _ := filepath.Glob(filepath.Join(prefix, "lib", "php", "extensions", "*", "opcache.so")); len(m) > 0 {
		b.Opcache = m[0]
	}
	return b, nil
}
