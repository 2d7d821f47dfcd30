package stack

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"
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

// TestCopyFS: an fs.FS (the embedded demo) is written out at every depth, empty directories included.
func TestCopyFS(t *testing.T) {
	src := fstest.MapFS{
		"index.php":        {Data: []byte("<?php echo 1;")},
		"lib/a/b/deep.php": {Data: []byte("<?php // deep")},
		"public/style.css": {Data: []byte("body{}")},
		"empty":            {Mode: fs.ModeDir | 0o700},
	}
	dst := filepath.Join(t.TempDir(), "doc")
	if err := CopyFS(src, dst); err != nil {
		t.Fatal(err)
	}
	for name, f := range src {
		path := filepath.Join(dst, filepath.FromSlash(name))
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if f.Mode.IsDir() {
			if !st.IsDir() {
				t.Errorf("%s: %v, want a directory", name, st.Mode())
			}
			continue
		}
		if b, _ := os.ReadFile(path); string(b) != string(f.Data) || !st.Mode().IsRegular() {
			t.Errorf("%s: %q %v, want the file %q", name, b, st.Mode(), f.Data)
		}
	}
}
