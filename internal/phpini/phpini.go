// Package phpini writes the php.ini that phptune's PHP processes read: Debian's defaults as its packages ship
// them, not the host's edited copies. A baseline called "Debian's defaults" must not silently carry whatever an
// administrator changed in /etc/php, yet it must load the extensions the host enabled, because the app needs them.
package phpini

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/phptune/phptune/internal/textline"
)

// Files are the settings a PHP process is started with: INI as -c, ScanDir as PHP_INI_SCAN_DIR. Both empty for a
// PHP that is neither Debian's nor in a prefix of its own (it reads what it was built to read).
type Files struct {
	INI     string
	ScanDir string
}

// Env is the environment entry that points PHP at ScanDir ("" when there is none).
func (f Files) Env() []string {
	if f.ScanDir == "" {
		return nil
	}
	return []string{"PHP_INI_SCAN_DIR=" + f.ScanDir}
}

// Roots of Debian's PHP files; fields so tests can point them elsewhere.
type Roots struct {
	Etc   string // /etc/php: the host's php.ini and conf.d per version and SAPI
	Lib   string // /usr/lib/php: php.ini-production per version, as shipped
	Share string // /usr/share: php8.2-opcache/opcache/opcache.ini and friends, module inis as shipped
}

// DebianRoots are the real ones.
func DebianRoots() Roots { return Roots{Etc: "/etc/php", Lib: "/usr/lib/php", Share: "/usr/share"} }

var fpmVersion = regexp.MustCompile(`php-fpm(\d+\.\d+)$`)

// Version is X.Y of a Debian php-fpm binary (/usr/sbin/php-fpm8.2), or "".
func Version(fpmBin string) string {
	if m := fpmVersion.FindStringSubmatch(filepath.Base(fpmBin)); m != nil {
		return m[1]
	}
	return ""
}

// Baseline writes into dir (which must exist) the settings for fpmBin: Debian's php.ini-production of its version,
// and a conf.d with one file per module the host enables for php-fpm, taken as the package ships it when it can be
// found, else reduced to its extension lines. A php-fpm in a prefix of its own (a phptune build:
// PREFIX/sbin/php-fpm beside PREFIX/lib/php.ini) gets the same php.ini-production, then its prefix's php.ini (which
// loads its opcache), and no conf.d: a build then races Debian's php-fpm on the same settings (output_buffering,
// zend.assertions, variables_order... differ from PHP's built-in defaults). For any other binary it writes nothing.
func Baseline(fpmBin, dir string) (Files, error) { return DebianRoots().Baseline(fpmBin, dir) }

// Baseline is the package-level Baseline under these roots.
func (r Roots) Baseline(fpmBin, dir string) (Files, error) {
	ver := Version(fpmBin)
	if ver == "" {
		return r.prefixed(fpmBin, dir)
	}
	prod := filepath.Join(r.Lib, ver, "php.ini-production")
	data, err := os.ReadFile(prod)
	if err != nil {
		return Files{}, fmt.Errorf("Debian's php.ini for PHP %s: %w (reinstall php%s-common)", ver, err, ver)
	}
	f := Files{INI: filepath.Join(dir, "php.ini"), ScanDir: filepath.Join(dir, "conf.d")}
	if err := os.WriteFile(f.INI, data, 0o600); err != nil {
		return Files{}, fmt.Errorf("write php.ini: %w", err)
	}
	if err := os.MkdirAll(f.ScanDir, 0o700); err != nil {
		return Files{}, fmt.Errorf("write conf.d: %w", err)
	}
	hostDir := filepath.Join(r.Etc, ver, "fpm", "conf.d")
	entries, err := os.ReadDir(hostDir)
	if err != nil && !os.IsNotExist(err) {
		return Files{}, fmt.Errorf("read %s: %w", hostDir, err)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".ini") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	for _, n := range names {
		text, err := r.module(ver, filepath.Join(hostDir, n))
		if err != nil {
			return Files{}, err
		}
		if err := os.WriteFile(filepath.Join(f.ScanDir, n), []byte(text), 0o600); err != nil {
			return Files{}, fmt.Errorf("write conf.d: %w", err)
		}
	}
	return f, nil
}

// prefixed is Baseline for a php-fpm in a prefix of its own: Debian's php.ini-production of its version, then the
// prefix's php.ini; an empty conf.d.
func (r Roots) prefixed(fpmBin, dir string) (Files, error) {
	ownPath := filepath.Join(filepath.Dir(filepath.Dir(fpmBin)), "lib", "php.ini")
	own, err := os.ReadFile(ownPath)
	if err != nil {
		return Files{}, nil // not a prefix of its own: PHP reads what it was built to read
	}
	ver, err := versionOf(fpmBin)
	if err != nil {
		return Files{}, err
	}
	prod, err := os.ReadFile(filepath.Join(r.Lib, ver, "php.ini-production"))
	if err != nil {
		return Files{}, fmt.Errorf("Debian's php.ini for PHP %s, which %s runs with: %w (apt-get install php%s-common)", ver, fpmBin, err, ver)
	}
	f := Files{INI: filepath.Join(dir, "php.ini"), ScanDir: filepath.Join(dir, "conf.d")}
	text := string(prod) + "\n; " + ownPath + ", after Debian's production settings\n" + string(own)
	if err := os.WriteFile(f.INI, []byte(text), 0o600); err != nil {
		return Files{}, fmt.Errorf("write php.ini: %w", err)
	}
	if err := os.MkdirAll(f.ScanDir, 0o700); err != nil {
		return Files{}, fmt.Errorf("write conf.d: %w", err)
	}
	return f, nil
}

var phpV = regexp.MustCompile(`^PHP (\d+\.\d+)\.`)

// BannerVersion is X.Y from what php -v prints (PHP 8.2.7 (fpm-fcgi) ...), or "".
func BannerVersion(banner string) string {
	if m := phpV.FindStringSubmatch(banner); m != nil {
		return m[1]
	}
	return ""
}

// versionOf is X.Y of a php-fpm binary, from its -v.
func versionOf(fpmBin string) (string, error) {
	out, err := exec.Command(fpmBin, "-n", "-v").Output()
	if err != nil {
		return "", fmt.Errorf("%s -v: %w", fpmBin, err)
	}
	v := BannerVersion(string(out))
	if v == "" {
		return "", fmt.Errorf("%s -v: no version in %q", fpmBin, textline.First(string(out)))
	}
	return v, nil
}

// module is a conf.d entry as Debian ships it: the pristine copy under /usr/share/phpX.Y-*/ (the module ini that
// phpenmod links to), or the host's entry reduced to the lines that load extensions.
func (r Roots) module(ver, path string) (string, error) {
	mod := strings.TrimSuffix(filepath.Base(path), ".ini")
	if target, err := filepath.EvalSymlinks(path); err == nil {
		mod = strings.TrimSuffix(filepath.Base(target), ".ini")
	} else if i := strings.IndexByte(mod, '-'); i >= 0 {
		mod = mod[i+1:] // "20-redis" without a link: the priority prefix
	}
	shipped, _ := filepath.Glob(filepath.Join(r.Share, "php"+ver+"-*", "*", mod+".ini"))
	if len(shipped) > 0 {
		data, err := os.ReadFile(shipped[0])
		if err != nil {
			return "", fmt.Errorf("read %s: %w", shipped[0], err)
		}
		return string(data), nil
	}
	return extensionLines(path)
}

var loads = regexp.MustCompile(`^\s*(zend_)?extension\s*=`)

func extensionLines(path string) (string, error) {
	fh, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	defer fh.Close()
	var b strings.Builder
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		if loads.MatchString(sc.Text()) {
			b.WriteString(strings.TrimSpace(sc.Text()) + "\n")
		}
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	return b.String(), nil
}
