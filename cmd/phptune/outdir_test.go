package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/phptune/phptune/internal/cli"
)

// A results dir, and the parents cli.OpenOut made for it, go with release when nothing was written into them; a dir
// that holds a file, or that was there before, stays.
func TestOpenOutLeavesNoEmptyDir(t *testing.T) {
	top := t.TempDir()
	empty := filepath.Join(top, "results", "run")
	release, err := cli.OpenOut(empty)
	if err != nil {
		t.Fatal(err)
	}
	release()
	if _, err := os.Stat(filepath.Join(top, "results")); !os.IsNotExist(err) {
		t.Errorf("an empty results dir and its parent were left behind: %v", err)
	}
	kept := filepath.Join(top, "kept", "run")
	if release, err = cli.OpenOut(kept); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(kept, "result.json"), []byte("{}"), 0o644)
	release()
	if _, err := os.Stat(filepath.Join(kept, "result.json")); err != nil {
		t.Errorf("a results dir with a result went: %v", err)
	}
	if release, err = cli.OpenOut(top); err != nil {
		t.Fatal(err)
	}
	release()
	if _, err := os.Stat(top); err != nil {
		t.Errorf("a dir that was there before went: %v", err)
	}
}
