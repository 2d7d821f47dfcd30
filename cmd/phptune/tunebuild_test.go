package main

import (
	"strings"
	"testing"
)

// TestTuneBuildBadInput: an unknown variant, or --skip php beside --build, is refused before anything runs.
func TestTuneBuildBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--build", "pgo+o3"}, "--build pgo+o3: want pgo"},
		{[]string{"--build", "pgo", "--skip", "php"}, "--build and --skip php"},
	} {
		r := phptune(t, append([]string{"tune", "--budget", "1m"}, c.args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line with %q", c.args, r.code, r.stderr, c.want)
		}
	}
}
