package clients

import (
	"strings"
	"testing"
)

// TestValidatePorts: a server's port is a port, or 0 for a free one.
func TestValidatePorts(t *testing.T) {
	cfg := Config{Targets: []string{Tarantool}, Ops: map[string][]string{Tarantool: {"select"}}, Models: Models, Revs: 1, Iterations: 1,
		Fibers: []int{2}, Procs: []int{2}, Depths: []int{2}, SweepIterations: 1, SweepRevs: 1}
	for _, c := range []struct {
		ports map[string]int
		want  string
	}{
		{nil, ""},
		{map[string]int{Tarantool: 3301, Redis: 0}, ""},
		{map[string]int{Tarantool: 70000}, "port 70000: want 1 to 65535, or 0 for a free one"},
		{map[string]int{Redis: -1}, "port -1: want"},
	} {
		cfg.Ports = c.ports
		err := cfg.Validate()
		if (err == nil) != (c.want == "") || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("ports %v: %v, want %q", c.ports, err, c.want)
		}
	}
}
