package stack

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A docroot whose front controller the workers' user cannot reach or read is refused, saying what to do: tune's
// copy would serve it, the server would not.
func TestServable(t *testing.T) {
	top, err := os.MkdirTemp("/tmp", "stack-servable-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(top) })
	os.Chmod(top, 0o755)
	app := filepath.Join(top, "app")
	if err := os.Mkdir(app, 0o755); err != nil {
		t.Fatal(err)
	}
	front := filepath.Join(app, "index.php")
	if err := os.WriteFile(front, []byte("<?php echo 1;"), 0o600); err != nil {
		t.Fatal(err)
	}
	other := workers{user: "someone", uid: os.Getuid() + 4242, gid: os.Getgid() + 4242}
	if err := servable(app, "index.php", other); err == nil || !strings.Contains(err.Error(), "cannot read "+front) ||
		!strings.Contains(err.Error(), "chmod -R o+rX "+app) || strings.Contains(err.Error(), "\n") {
		t.Errorf("a front controller of mode 0600: %v, want one line naming it and the chmod", err)
	}
	os.Chmod(front, 0o644)
	if err := servable(app, "index.php", other); err != nil {
		t.Errorf("a readable app: %v", err)
	}
	os.Chmod(app, 0o700)
	if err := servable(app, "index.php", other); err == nil || !strings.Contains(err.Error(), "cannot enter "+app) {
		t.Errorf("a docroot of mode 0700: %v, want it named", err)
	}
	// A group the user is in, beside its own, opens it as the group's bits say.
	os.Chmod(app, 0o710)
	if err := servable(app, "index.php", workers{user: "g", uid: other.uid, gid: other.gid, groups: []int{mustGid(t, app)}}); err != nil {
		t.Errorf("a docroot open to a group the user is in: %v", err)
	}
	// Workers that run as us (not root): nothing to check.
	if err := servable(app, "index.php", workers{uid: -1, gid: -1}); err != nil {
		t.Errorf("workers as us: %v", err)
	}
}
