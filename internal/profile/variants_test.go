package profile

import (
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/knob"
)

// TestVariants: --knob's values go into the baseline, each --compare value into a copy of it named by the value;
// the baseline is not changed by a compare; a value that is no knob's is a usage error naming its flag.
func TestVariants(t *testing.T) {
	known := knob.All("", nil)
	vs, err := Variants(knob.Config{}, known, []string{"memory_limit=256M"}, []string{"opcache=off", "memory_limit=512M"})
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 3 || vs[0].Name != "baseline" || vs[1].Name != "opcache=off" || vs[2].Name != "memory_limit=512M" {
		t.Fatalf("variants %+v: want baseline, opcache=off, memory_limit=512M", vs)
	}
	base, off, mem := vs[0].Config.String(), vs[1].Config.String(), vs[2].Config.String()
	if !strings.Contains(base, "256M") || strings.Contains(base, "512M") || base == off || !strings.Contains(mem, "512M") {
		t.Errorf("baseline %q, opcache=off %q, memory_limit=512M %q: want the --knob in the baseline, each compare in its own", base, off, mem)
	}
	for flag, args := range map[string][2][]string{"--knob": {{"opcache"}, nil}, "--compare": {nil, {"=1"}}} {
		if _, err := Variants(knob.Config{}, known, args[0], args[1]); exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), flag) {
			t.Errorf("a bad %s: %v, want a usage error naming it", flag, err)
		}
	}
}

// TestWithout: --without skips system calls or instructions; anything else is a usage error.
func TestWithout(t *testing.T) {
	var o Options
	if err := o.Without([]string{"syscalls"}); err != nil || !o.NoSyscalls || o.NoInstructions {
		t.Errorf("--without syscalls: %v, %+v", err, o)
	}
	if err := o.Without([]string{"instructions"}); err != nil || !o.NoInstructions {
		t.Errorf("--without instructions: %v, %+v", err, o)
	}
	if err := (&Options{}).Without([]string{"memory"}); exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), "--without memory") {
		t.Errorf("--without memory: %v, want a usage error", err)
	}
}
