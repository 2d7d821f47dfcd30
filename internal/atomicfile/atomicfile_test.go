package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := Write(p, []byte("one"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := Write(p, []byte("two"), 0o600); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(p)
	data, _ := os.ReadFile(p)
	if string(data) != "two" || st.Mode().Perm() != 0o600 {
		t.Errorf("%q %v", data, st.Mode())
	}
	// A write that cannot land leaves the old file and no temporary one.
	if err := Write(filepath.Join(dir, "missing", "f"), []byte("x"), 0o600); err == nil {
		t.Error("wrote into a missing directory")
	}
	if err := os.Mkdir(filepath.Join(dir, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := Write(filepath.Join(dir, "d"), []byte("x"), 0o600); err == nil {
		t.Error("renamed over a directory")
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".phptune-*"))
	if data, _ := os.ReadFile(p); string(data) != "two" || len(left) != 0 {
		t.Errorf("after failures: %q, temporary files %v", data, left)
	}
}
