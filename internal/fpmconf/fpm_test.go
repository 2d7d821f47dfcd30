package fpmconf

import (
	"strconv"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/fpmconf/fpmtest"
)

// phpFPM is Debian's php-fpm, the reader's ground truth (make deps installs it).
const phpFPM = fpmtest.PHPFPM

func fpmTest(t *testing.T, main, prefix string, full bool) (string, bool) {
	return fpmtest.Test(t, main, prefix, full)
}

func fpmDump(t *testing.T, main, prefix string) fpmtest.Dump { return fpmtest.DumpOf(t, main, prefix) }

// compareDump checks every directive the reader resolved against what php-fpm printed, and that both see the
// same pools.
func compareDump(t *testing.T, c *Config, d fpmtest.Dump) {
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
