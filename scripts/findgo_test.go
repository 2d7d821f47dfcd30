// Package scripts holds the set-up's shell scripts; its test checks how the install step picks a Go.
package scripts

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakeGo makes dir/bin/go, a script that reports version v as `go version` does.
func fakeGo(t *testing.T, v string) string {
	t.Helper()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "bin"), 0o755)
	script := "#!/bin/sh\necho 'go version go" + v + " linux/amd64'\n"
	if err := os.WriteFile(filepath.Join(dir, "bin", "go"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestFindGo: a Go new enough for go.mod is used where it is found; one too old, or none, makes the install step
// install Debian's golang-1.23-go (find-go.sh fails, saying why).
func TestFindGo(t *testing.T) {
	old, ok, newer := fakeGo(t, "1.19.8"), fakeGo(t, "1.23.5"), fakeGo(t, "1.24.1")
	cases := []struct {
		name        string
		path, roots string
		goEnv       string
		want        string // the Go chosen; "" = none, and the script says why
		says        string
	}{
		{"too old on PATH, nothing else", old + "/bin", "", "", "", "older than go 1.23"},
		{"too old on PATH, Debian's 1.23 installed", old + "/bin", ok, "", ok + "/bin/go", ""},
		{"new enough on PATH", newer + "/bin", ok, "", newer + "/bin/go", ""},
		{"GO= first", ok + "/bin", "", newer + "/bin/go", newer + "/bin/go", ""},
		{"none at all", "", "", "", "", "no Go found"},
	}
	// The tools the script uses, and no go: a host's own /usr/bin/go must not count.
	tools := t.TempDir()
	for _, name := range []string{"sh", "sed", "cut", "ls", "sort", "tr", "dirname"} {
		p, err := exec.LookPath(name)
		if err != nil {
			t.Fatal(err)
		}
		os.Symlink(p, filepath.Join(tools, name))
	}
	sh := filepath.Join(tools, "sh")
	for _, c := range cases {
		cmd := exec.Command(sh, "find-go.sh")
		cmd.Env = []string{"PATH=" + strings.Trim(c.path+":"+tools, ":"), "PHPTUNE_GO_ROOTS=" + c.roots, "GO=" + c.goEnv}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		got := strings.TrimSpace(string(out))
		if got != c.want || (c.want == "") != (err != nil) || !strings.Contains(stderr.String(), c.says) {
			t.Errorf("%s: chose %q (%v, %q), want %q saying %q", c.name, got, err, stderr.String(), c.want, c.says)
		}
	}
}
