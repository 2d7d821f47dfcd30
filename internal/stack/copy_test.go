package stack

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCopyKeep: a packaged app's tree is copied through its symlinks, without what keep refuses (paths
// relative and slash-separated, at any depth) and without a dangling link.
func TestCopyKeep(t *testing.T) {
	src, dst := t.TempDir(), filepath.Join(t.TempDir(), "doc")
	etc := t.TempDir()
	for path, text := range map[string]string{
		filepath.Join(src, "index.php"):          "<?php",
		filepath.Join(src, "install.php"):        "<?php // not served",
		filepath.Join(src, "inc", "a.php"):       "<?php // a",
		filepath.Join(src, "inc", "preload.php"): "<?php // not served",
		filepath.Join(etc, "local.php"):          "<?php // through the link",
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(etc, filepath.Join(src, "conf")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(src, "missing"), filepath.Join(src, "dangling")); err != nil {
		t.Fatal(err)
	}
	skip := map[string]bool{"install.php": true, "inc/preload.php": true}
	if err := CopyKeep(src, dst, func(rel string) bool { return !skip[rel] }); err != nil {
		t.Fatal(err)
	}
	for rel, want := range map[string]bool{"index.php": true, "inc/a.php": true, "conf/local.php": true,
		"install.php": false, "inc/preload.php": false, "dangling": false} {
		_, err := os.Stat(filepath.Join(dst, filepath.FromSlash(rel)))
		if got := err == nil; got != want {
			t.Errorf("%s copied: %v, want %v", rel, got, want)
		}
	}
}
