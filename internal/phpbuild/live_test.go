package phpbuild

import (
	"os"
	"path/filepath"
	"testing"
)

// The profile shuffle of live training: out of the tree into the GCOV_PREFIX mirror (every directory there
// writable by the workers' user), and back.
func TestProfilesMoveToMirrorAndBack(t *testing.T) {
	tree := filepath.Join(t.TempDir(), "src")
	gcov := t.TempDir()
	for _, d := range []string{"Zend", "sapi/cgi", "sapi/fpm/fpm"} {
		os.MkdirAll(filepath.Join(tree, d), 0o755)
	}
	os.WriteFile(filepath.Join(tree, "Zend", "zend_execute.gcda"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(tree, "sapi", "cgi", "cgi_main.gcda"), []byte("y"), 0o644)
	mirror := filepath.Join(gcov, tree)
	if err := mirrorDirs(tree, mirror); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(mirror, "sapi", "fpm", "fpm"))
	if err != nil || st.Mode().Perm() != 0o777 {
		t.Fatalf("mirror dir: %v %v", st, err)
	}
	if n, err := moveProfiles(tree, mirror); err != nil || n != 2 {
		t.Fatalf("moved %d, %v", n, err)
	}
	if _, err := CheckProfiles(tree); err == nil {
		t.Error("profiles still in the tree")
	}
	st, _ = os.Stat(filepath.Join(mirror, "Zend", "zend_execute.gcda"))
	if st == nil || st.Mode().Perm() != 0o666 {
		t.Errorf("moved profile: %v", st)
	}
	// A worker's new profile, and the master's copy in the tree, which is dropped.
	os.WriteFile(filepath.Join(mirror, "sapi", "fpm", "fpm", "fpm_main.gcda"), []byte("z"), 0o666)
	os.WriteFile(filepath.Join(tree, "Zend", "zend_execute.gcda"), []byte("master"), 0o644)
	if n, err := removeProfiles(tree); err != nil || n != 1 {
		t.Fatalf("removed %d, %v", n, err)
	}
	if n, err := moveProfiles(mirror, tree); err != nil || n != 3 {
		t.Fatalf("moved back %d, %v", n, err)
	}
	if n, err := CheckProfiles(tree); err != nil || n != 3 {
		t.Errorf("after: %d, %v", n, err)
	}
	if b, _ := os.ReadFile(filepath.Join(tree, "Zend", "zend_execute.gcda")); string(b) != "x" {
		t.Errorf("zend_execute.gcda = %q, want the accumulated one", b)
	}
}
