package stack

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestWriteEnv: the endpoints as shell variables a shell reads back exactly, quotes included; a pool the stack
// does not have is empty.
func TestWriteEnv(t *testing.T) {
	s := &Stack{RunDir: "/tmp/run dir", Docroot: "/srv/it's/app", Front: "index.php", HTTPURL: "http://127.0.0.1:8080/",
		Pools: []Endpoint{{Name: "www", Network: ListenTCP, Address: "127.0.0.1:9000"}}}
	path := filepath.Join(t.TempDir(), "env")
	if err := s.WriteEnv(path); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := `PHPTUNE_HTTP='http://127.0.0.1:8080/'
PHPTUNE_FCGI='fcgi://127.0.0.1:9000/srv/it'\''s/app/index.php'
PHPTUNE_UNIX=''
PHPTUNE_DOCROOT='/srv/it'\''s/app'
PHPTUNE_SCRIPT='/srv/it'\''s/app/index.php'
PHPTUNE_RUNDIR='/tmp/run dir'
`
	if string(data) != want {
		t.Errorf("env file:\n%s\nwant:\n%s", data, want)
	}
	out, err := exec.Command("sh", "-c", `. "$1" && printf '%s|%s|%s' "$PHPTUNE_SCRIPT" "$PHPTUNE_RUNDIR" "$PHPTUNE_UNIX"`, "sh", path).Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := string(out); got != "/srv/it's/app/index.php|/tmp/run dir|" {
		t.Errorf("read back by sh: %q", got)
	}
}
