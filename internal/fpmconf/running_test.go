package fpmconf

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/phptune/phptune/internal/fpmconf/fpmtest"
	"time"

	"github.com/phptune/phptune/internal/fcgi"
)

// TestFirstArrayValueWins runs php-fpm on a pool that sets php_value[X], php_admin_value[X] and env[X] twice,
// and asks a worker which it got: the first, which is what the reader keeps (-tt prints both).
func TestFirstArrayValueWins(t *testing.T) {
	main, _ := fpmtest.Single("[global]\nerror_log = @DIR@/error.log\n[www]\nuser = nobody\nlisten = @DIR@/www.sock\nlisten.mode = 0666\n" +
		"pm = static\npm.max_children = 1\nphp_admin_value[memory_limit] = 100M\nphp_admin_value[memory_limit] = 200M\n" +
		"php_value[precision] = 5\nphp_value[precision] = 7\nenv[A] = first\nenv[A] = second\n").Lay(t)
	dir := filepath.Dir(main)
	for _, d := range []string{filepath.Dir(dir), dir} { // the workers (nobody) read the script
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sock, script := filepath.Join(dir, "www.sock"), filepath.Join(dir, "i.php")
	if err := os.WriteFile(script, []byte(`<?php echo ini_get("memory_limit"), " ", ini_get("precision"), " ", getenv("A");`), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Read(main, Options{})
	if err != nil {
		t.Fatal(err)
	}
	www, _ := c.Pool("www")
	want := strings.Join([]string{www.Value("php_admin_value[memory_limit]", ""), www.Value("php_value[precision]", ""), www.Value("env[A]", "")}, " ")

	fpm := exec.Command(phpFPM, "-F", "-n", "-y", main)
	if err := fpm.Start(); err != nil {
		t.Fatalf("(needs php8.2-fpm: make deps) %v", err)
	}
	defer func() { fpm.Process.Signal(syscall.SIGTERM); fpm.Wait() }() // the master stops its workers
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	params := fcgi.CGIParams(fcgi.CGIOptions{ScriptFilename: script, ScriptName: "/i.php", RequestURI: "/i.php"})
	for ctx.Err() == nil {
		_, body, _, err := fcgi.Get(ctx, "unix", sock, params)
		if err == nil {
			if got := string(body); got != want {
				t.Errorf("the worker has %q, the reader %q", got, want)
			}
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("php-fpm did not answer on %s", sock)
}
