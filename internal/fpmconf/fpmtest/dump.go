package fpmtest

import (
	"bufio"
	"os/exec"
	"strings"
	"testing"
)

// PHPFPM is Debian's php-fpm, the reader's ground truth (make deps installs it).
const PHPFPM = "/usr/sbin/php-fpm8.2"

// Dump is what `php-fpm -tt` prints: section -> directive -> values, as printed (php_value[X] set twice is
// printed twice, the last set first; the one php-fpm applies last, the first set, is printed last).
type Dump map[string]map[string][]string

// Test runs php-fpm -t (-tt when full) on main, with -p prefix when given: what it printed, and whether it
// took the configuration.
func Test(t testing.TB, main, prefix string, full bool) (string, bool) {
	t.Helper()
	args := []string{"-t", "-y", main}
	if full {
		args[0] = "-tt"
	}
	if prefix != "" {
		args = append(args, "-p", prefix)
	}
	out, err := exec.Command(PHPFPM, args...).CombinedOutput()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatalf("(needs php8.2-fpm: make deps) %v", err)
	}
	return string(out), err == nil
}

// DumpOf is php-fpm -tt's view of main's configuration.
func DumpOf(t testing.TB, main, prefix string) Dump {
	t.Helper()
	out, ok := Test(t, main, prefix, true)
	if !ok {
		t.Fatalf("php-fpm refuses %s:\n%s", main, out)
	}
	d, section := Dump{}, ""
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		_, line, ok := strings.Cut(sc.Text(), "NOTICE: ")
		if strings.HasPrefix(line, "pid ") { // log_level = debug: "pid N, fpm_conf_dump(), line N: " first
			_, line, _ = strings.Cut(line, ": ")
		}
		switch {
		case !ok:
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = line[1 : len(line)-1]
			d[section] = map[string][]string{}
		case strings.HasPrefix(line, "\t"):
			k, v, _ := strings.Cut(line[1:], " = ")
			d[section][k] = append(d[section][k], v)
		}
	}
	return d
}
