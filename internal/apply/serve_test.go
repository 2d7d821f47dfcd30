package apply

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/phptune/phptune/workloads"
)

// Debian's pristine files with the plan's diff patched in serve the demo app: php-fpm and nginx started from
// the copy (a private socket, pid files and port on loopback) answer its pages through the site as the plan
// changed it, with the pool's JIT on.
func TestDebianServesTheAppAsPlanned(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("starts php-fpm and nginx with their workers as www-data: run as root")
	}
	root := debianRoot(t)
	port := freePort(t)
	privateServers(t, root, port)
	docroot := filepath.Join(root, "srv/app")
	if err := os.CopyFS(docroot, workloads.Demo()); err != nil {
		t.Fatal(err)
	}
	jit := "<?php $s = opcache_get_status(false); echo ini_get('opcache.jit'), ' ', ini_get('opcache.jit_buffer_size'), ' ', " +
		"json_encode($s['jit']['on'] ?? false);\n"
	if err := os.WriteFile(filepath.Join(docroot, "jit.php"), []byte(jit), 0o644); err != nil {
		t.Fatal(err)
	}
	openUp(t, root)

	start := debianStart(t, root)
	p, err := Make(layoutRec(t, start.Pool.Path, ""), start, Target{Version: version, Workers: 2, Docroot: docroot, Front: "index.php"}, []string{"phptune test"})
	if err != nil {
		t.Fatal(err)
	}
	patchRoot(t, root, p)
	checkRunsFromCopy(t, root)
	startServers(t, root, port)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	for _, path := range []string{"/", "/articles"} {
		if code, body := getPage(t, base+path); code != 200 {
			t.Errorf("GET %s: %d\n%s", path, code, body)
		}
	}
	if code, body := getPage(t, base+"/jit.php"); code != 200 || body != "tracing 64M true" {
		t.Errorf("GET /jit.php: %d %q, want the JIT on: tracing 64M true", code, body)
	}
}

// privateServers points the copy's servers at private places: the pool's socket, nginx's pid and logs in
// root, the site on loopback at port.
func privateServers(t *testing.T, root string, port int) {
	t.Helper()
	rewrite(t, filepath.Join(root, DebianPool(version)), map[string]string{"listen = /run/php/": "listen = " + root + "/run/"})
	rewrite(t, filepath.Join(root, "etc/nginx/nginx.conf"), map[string]string{"pid /run/nginx.pid": "pid " + root + "/run/nginx.pid",
		"/var/log/nginx/": root + "/"})
	rewrite(t, filepath.Join(root, DebianSite), map[string]string{"listen 80 default_server;": fmt.Sprintf("listen 127.0.0.1:%d;", port),
		"listen [::]:80 default_server;": ""})
	for _, d := range []string{"run", "php"} { // the socket's and php-fpm's pid file's
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// openUp lets the workers (www-data) reach the app and the socket: the test's directories are private.
func openUp(t *testing.T, root string) {
	t.Helper()
	for d := root; d != "/" && strings.HasPrefix(d, os.TempDir()) && d != os.TempDir(); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// checkRunsFromCopy: php-fpm -tt on the patched copy runs [www] with the recommended values.
func checkRunsFromCopy(t *testing.T, root string) {
	t.Helper()
	out, err := exec.Command("php-fpm"+version, "-tt", "-y", filepath.Join(root, "etc/php", version, "fpm/php-fpm.conf")).CombinedOutput()
	if err != nil {
		t.Fatalf("php-fpm -tt: %v\n%s", err, out)
	}
	for k, v := range recommended {
		if !strings.Contains(string(out), "\t"+k+" = "+v+"\n") {
			t.Errorf("php-fpm -tt has no %s = %s", k, v)
		}
	}
}

// startServers starts php-fpm and nginx from the copy, stopped when the test ends, and waits for the site.
func startServers(t *testing.T, root string, port int) {
	t.Helper()
	etc := filepath.Join(root, "etc/php", version, "fpm")
	fpm := exec.Command("php-fpm"+version, "-F", "-y", filepath.Join(etc, "php-fpm.conf"), "-c", filepath.Join(etc, "php.ini"))
	fpm.Env = append(os.Environ(), "PHP_INI_SCAN_DIR="+filepath.Join(etc, "conf.d"))
	ngx := exec.Command("nginx", "-p", "/usr/share/nginx/", "-c", filepath.Join(root, "etc/nginx/nginx.conf"), "-e", filepath.Join(root, "nginx-error.log"),
		"-g", "daemon off;")
	for _, c := range []*exec.Cmd{fpm, ngx} {
		c.Stdout, c.Stderr = os.Stderr, os.Stderr
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { stop(c) })
	}
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if code, _ := tryGet(fmt.Sprintf("http://127.0.0.1:%d/jit.php", port)); code == 200 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("the site did not answer on port %d; nginx: %s", port, tailOf(filepath.Join(root, "error.log")))
}

// stop ends a master; it stops its workers.
func stop(c *exec.Cmd) {
	c.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { c.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		c.Process.Kill()
		<-done
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func getPage(t *testing.T, url string) (int, string) {
	t.Helper()
	code, body := tryGet(url)
	if code == 0 {
		t.Fatalf("GET %s: %s", url, body)
	}
	return code, body
}

func tryGet(url string) (int, string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func tailOf(path string) string {
	b, _ := os.ReadFile(path)
	return string(b[max(0, len(b)-2000):])
}
