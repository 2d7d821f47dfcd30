package knob

import (
	"errors"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/exitcode"
)

func TestCheckName(t *testing.T) {
	dirs := []string{"memory_limit", "opcache.enable", "opcache.jit", "opcache.jit_buffer_size", "realpath_cache_size"}
	reads := 0
	directives := func() ([]string, error) { reads++; return dirs, nil }
	known := All("", nil)
	for _, c := range []struct {
		flag, name string
		knobs      bool
		want       string // "" = accepted
	}{
		{"--knob", "opcache", true, ""},
		{"--knob", "max_children", true, ""},
		{"--knob", "memory_limit", true, ""},
		{"--knob", "ini:memory_limit", true, ""},
		{"--knob", "opcach", true, "did you mean opcache"},
		{"--knob", "memory_limt", true, "did you mean memory_limit?"},
		{"--knob", "pm.max_children", true, "set by the knob max_children: give --knob max_children="},
		{"--knob", "listen.backlog", true, "the knob backlog"},
		{"--knob", "pm.start_servers", true, "no knob races"},
		{"--knob", "zzzz_qqq", true, "neither a knob nor an ini directive"},
		{"--ini", "memory_limit", false, ""},
		{"--ini", "jit", false, "a knob, not an ini directive: give --knob jit="},
		{"--ini", "pm.max_children", false, "the knob max_children"},
		{"--ini", "opcache.jti", false, "did you mean opcache.jit?"},
	} {
		err := CheckName(c.flag, c.name, known, c.knobs, directives)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s %s: %v", c.flag, c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s %s: error %v, want %q", c.flag, c.name, err, c.want)
		case err != nil && exitcode.Of(err) != exitcode.Usage:
			t.Errorf("%s %s: exit %d, want 2", c.flag, c.name, exitcode.Of(err))
		}
	}
	reads = 0
	if CheckName("--knob", "jit", known, true, directives); reads != 0 {
		t.Errorf("a knob's name read PHP's directives")
	}
	failing := func() ([]string, error) { return nil, errors.New("php-fpm -i failed") }
	if err := CheckName("--knob", "memory_limit", known, true, failing); err == nil {
		t.Errorf("a name taken when PHP's directives could not be read")
	}
}
