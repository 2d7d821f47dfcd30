package stack

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A directory above the private dir that the workers' user may not enter is named before anything is made (a
// test root of mode 0700 once made every page a 404 with nothing in the logs).
func TestReachable(t *testing.T) {
	// t.TempDir's parent is closed to others: a dir of its own under /tmp.
	top, err := os.MkdirTemp("/tmp", "stack-reach-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(top) })
	closed := filepath.Join(top, "closed")
	if err := os.Mkdir(closed, 0o700); err != nil {
		t.Fatal(err)
	}
	os.Chmod(top, 0o755)
	other := workers{user: "someone", uid: os.Getuid() + 4242, gid: os.Getgid() + 4242}
	err = reachable(filepath.Join(closed, "phptune-*"), other)
	if err == nil || !strings.Contains(err.Error(), closed) || !strings.Contains(err.Error(), "0700") {
		t.Errorf("closed parent: %v, want an error naming %s and its mode", err, closed)
	}
	os.Chmod(closed, 0o711)
	if err := reachable(filepath.Join(closed, "phptune-*"), other); err != nil {
		t.Errorf("parents open to others: %v", err)
	}
	// The owner's bit is the one that counts for the owner, the group's for the group.
	os.Chmod(closed, 0o610)
	owner := workers{user: "me", uid: os.Getuid(), gid: os.Getgid() + 4242}
	if err := reachable(filepath.Join(closed, "x"), owner); err == nil {
		t.Error("owner without x: want an error")
	}
	if err := reachable(filepath.Join(closed, "x"), workers{user: "g", uid: os.Getuid() + 4242, gid: mustGid(t, closed)}); err != nil {
		t.Errorf("group with x: %v", err)
	}
	// Workers that run as us (not root): nothing to check.
	if err := reachable(filepath.Join(closed, "x"), workers{uid: -1, gid: -1}); err != nil {
		t.Errorf("workers as us: %v", err)
	}
}

func mustGid(t *testing.T, p string) int {
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return int(st.Sys().(*syscall.Stat_t).Gid)
}
