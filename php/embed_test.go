package phpsrc

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The three files the clients benchmark writes out are embedded, and each is PHP that php -l accepts: a file
// left out of the embed line, or broken, would fail only in a run of `phptune clients`.
func TestTheEmbeddedFilesArePHP(t *testing.T) {
	php, err := exec.LookPath("php")
	if err != nil {
		t.Fatalf("php is needed (apt-get install php8.2-cli): %v", err)
	}
	dir := t.TempDir()
	for _, name := range []string{"lib.php", "ops.php", "runner.php"} {
		b, err := FS.ReadFile(name)
		if err != nil {
			t.Fatalf("%s is not embedded: %v", name, err)
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(php, "-l", path).CombinedOutput(); err != nil {
			t.Errorf("php -l %s: %v\n%s", name, err, out)
		}
	}
}
