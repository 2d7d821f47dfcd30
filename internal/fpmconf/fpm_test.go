package fpmconf

import (
	"bufio"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// phpFPM is Debian's php-fpm, the reader's ground truth (make deps installs it).
const phpFPM = "/usr/sbin/php-fpm8.2"

// dump is what `php-fpm -tt` prints: section -> directive -> values, as printed (php_value[X] set twice is
// printed twice, the last set first; the one php-fpm applies last, the first set, is printed last).
type dump map[string]map[string][]string

// fpmTest runs php-fpm -t (-tt when full) on main, with -p prefix when given: what it printed, and whether it
// took the configuration.
func fpmTest(t *testing.T, main, prefix string, full bool) (string, bool) {
	t.Helper()
	args := []string{"-t", "-y", main}
	if full {
		args[0] = "-tt"
	}
	if prefix != "" {
		args = append(args, "-p", prefix)
	}
	out, err := exec.Command(phpFPM, args...).CombinedOutput()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatalf("(needs php8.2-fpm: make deps) %v", err)
	}
	return string(out), err == nil
}

// fpmDump is php-fpm -tt's view of main's configuration.
func fpmDump(t *testing.T, main, prefix string) dump {
	t.Helper()
	out, ok := fpmTest(t, main, prefix, true)
	if !ok {
		t.Fatalf("php-fpm refuses %s:\n%s", main, out)
	}
	d, section := dump{}, ""
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

// compareDump checks every directive the reader resolved against what php-fpm printed, and that both see the
// same pools.
func compareDump(t *testing.T, c *Config, d dump) {
	t.Helper()
	if len(d)-1 != len(c.Pools) {
		t.Errorf("php-fpm has %d pools, the reader %v", len(d)-1, c.PoolNames())
	}
	compareSection(t, c.Global, d["global"])
	for _, p := range c.Pools {
		want, ok := d[p.Name]
		if !ok {
			t.Errorf("pool [%s]: php-fpm has no such pool", p.Name)
			continue
		}
		compareSection(t, p, want)
	}
}

func compareSection(t *testing.T, s *Section, want map[string][]string) {
	t.Helper()
	for _, k := range s.Keys {
		d := s.Directives[k]
		printed := ttKey(k)
		vs, ok := want[printed]
		if !ok {
			t.Errorf("[%s] %s (%s:%d): php-fpm prints no %s", s.Name, k, d.File, d.Line, printed)
			continue
		}
		if got := ttValue(s, k, d.Value); got != vs[len(vs)-1] {
			t.Errorf("[%s] %s = %q (%s:%d), php-fpm has %q", s.Name, k, got, d.File, d.Line, vs[len(vs)-1])
		}
	}
}

// ttKey is the name -tt prints a directive under: flags are printed as values.
func ttKey(k string) string {
	k = strings.Replace(k, "php_admin_flag[", "php_admin_value[", 1)
	return strings.Replace(k, "php_flag[", "php_value[", 1)
}

// spares are the settings of pm = dynamic.
var spares = map[string]bool{"pm.start_servers": true, "pm.min_spare_servers": true, "pm.max_spare_servers": true}

// ttValue is a resolved value written the way -tt prints it.
func ttValue(s *Section, k, v string) string {
	global := s.Name == "global"
	kd, err := checkKey(k, global)
	if err != nil {
		return v
	}
	switch {
	case spares[k] && s.Value("pm", "") != "dynamic":
		return "0" // php-fpm sets them to 0 where it does not use them
	case k == "log_level":
		return strings.ToUpper(v)
	case kd == kindBool && truthy(v):
		return "yes"
	case kd == kindBool:
		return "no"
	case kd == kindTime && k == "pm.process_idle_timeout":
		n, _ := s.Seconds(k)
		return strconv.Itoa(n)
	case kd == kindTime:
		n, _ := s.Seconds(k)
		return strconv.Itoa(n) + "s"
	case kd == kindRlimit && v == "unlimited":
		return "-1"
	case kd == kindInt && v == "":
		return "0"
	case v == "" && !strings.Contains(k, "["):
		return "undefined"
	}
	return v
}
