package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A usage error is found before anything is made: no run dir, no --out, nothing under the working directory.
// Each case is the real binary with bad input; none gets as far as starting a server.
func TestUsageErrorsCreateNothing(t *testing.T) {
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"tune", "--p99", "200ms"}, "give --p99 and --rate together"},
		{[]string{"tune", "--budget", "5s"}, "give at least --budget 30s"},
		{[]string{"tune", "--alpha", "2"}, "--alpha 2"},
		{[]string{"tune", "--soak", "forever"}, "want a duration such as 2m, or off"},
		{[]string{"tune", "--min-effect", "-1"}, "--min-effect"},
		{[]string{"tune", "--knob", "opcach=0,1"}, "did you mean opcache"},
		{[]string{"tune", "--knob", "pm.max_children=4,8"}, "set by the knob max_children"},
		{[]string{"tune", "--ini", "memory_limt=1G"}, "did you mean memory_limit?"},
		{[]string{"tune", "--url-file", "missing.yaml"}, "--url-file"},
		{[]string{"profile", "--compare", "jti=tracing", "--out", "run"}, "did you mean jit?"},
		{[]string{"bench", "http://127.0.0.1:9/", "--fpm-status", "status", "--out", "run"}, "--fpm-status"},
		{[]string{"compare", "--interleave", "x", "y", "--out", "run"}, "unknown scheme"},
		{[]string{"compare", "--alpha", "2", "a.json", "b.json", "--out", "run"}, "--alpha 2"},
		{[]string{"ingest", "k6", "missing.json", "--out", "run"}, "missing.json"},
		{[]string{"check", "tcp:127.0.0.1:1", "--out", "run"}, "nothing listens"},
		{[]string{"check", "www.conf", "--out", "run"}, "no such file"},
	} {
		dir := t.TempDir()
		cmd := exec.Command(binPath(t), c.args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), c.says) {
			t.Errorf("phptune %s: %v, %q; want exit 2 saying %q", strings.Join(c.args, " "), err, out, c.says)
		}
		if left, _ := os.ReadDir(dir); len(left) > 0 {
			t.Errorf("phptune %s left %s in its working directory", strings.Join(c.args, " "), filepath.Join(dir, left[0].Name()))
		}
	}
}
