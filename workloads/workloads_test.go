package workloads

import (
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The demo is embedded whole: its front controller, its catalogue (JSON that parses) and every PHP file, each of
// which php -l accepts. A file the embed left out, or one broken, would otherwise show only as a failing check
// in a run of tune.
func TestTheDemoIsEmbeddedWhole(t *testing.T) {
	php, err := exec.LookPath("php")
	if err != nil {
		t.Fatalf("php is needed (apt-get install php8.2-cli): %v", err)
	}
	demo := Demo()
	b, err := fs.ReadFile(demo, "data/catalogue.json")
	if err != nil {
		t.Fatal(err)
	}
	var catalogue any
	if err := json.Unmarshal(b, &catalogue); err != nil {
		t.Errorf("data/catalogue.json: %v", err)
	}
	dir := t.TempDir()
	var files []string
	err = fs.WalkDir(demo, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".php") {
			return err
		}
		b, err := fs.ReadFile(demo, path)
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
			return err
		}
		files = append(files, path)
		return os.WriteFile(dst, b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 10 || !slices.Contains(files, "index.php") {
		t.Fatalf("the demo's PHP files: %v; want index.php among many", files)
	}
	for _, f := range files {
		if out, err := exec.Command(php, "-l", filepath.Join(dir, f)).CombinedOutput(); err != nil {
			t.Errorf("php -l %s: %v\n%s", f, err, out)
		}
	}
}
