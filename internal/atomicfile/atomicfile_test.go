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

// TestSave: a file to share is readable by all; an error names the file, the system call's words and what to do,
// without the temporary file's name.
func TestSave(t *testing.T) {
	path := filepath.Join(t.TempDir(), "result.json")
	if err := Save(path, []byte("{}")); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("saved: %v, %v", st, err)
	}
	bad := filepath.Join(t.TempDir(), "nosuch", "result.json")
	if err := Save(bad, nil); err == nil || err.Error() != "write "+bad+": no such file or directory: free space there or give another --out" {
		t.Errorf("into a missing dir: %v", err)
	}
}
