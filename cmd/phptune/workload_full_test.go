//go:build workloads

// The presets beyond CI's demo and dokuwiki: `make test-workloads` runs these (they install Debian packages
// and take minutes).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/workload"
)

// prepareByName prepares a preset into a fresh data dir, twice (the second does nothing), and logs the time.
func prepareByName(t *testing.T, name string) string {
	t.Helper()
	data := t.TempDir()
	t.Setenv("XDG_DATA_HOME", data)
	start := time.Now()
	r := phptune(t, "workload", "prepare", name)
	if r.code != 0 || !strings.Contains(r.stdout, name+" prepared in") {
		t.Fatalf("prepare %s: exit %d: %s %s", name, r.code, r.stdout, r.stderr)
	}
	t.Logf("PREPARE %s: %s", name, time.Since(start).Round(100*time.Millisecond))
	r = phptune(t, "workload", "prepare", name)
	if r.code != 0 || !strings.Contains(r.stdout, "already prepared") {
		t.Fatalf("prepare %s again: exit %d: %s %s", name, r.code, r.stdout, r.stderr)
	}
	return filepath.Join(data, "phptune", "workloads", name)
}

func TestWorkloadWordPress(t *testing.T) {
	dir := prepareByName(t, "wordpress")
	cmd, info, stderr := serveApp(t, "wordpress")
	if len(info.Services) != 1 || !strings.Contains(info.Services[0], "mariadb") {
		t.Fatalf("serve wordpress started services %v, want its private mariadb", info.Services)
	}
	if pids := processesMentioning(filepath.Join(dir, "mysql")); len(pids) != 1 {
		t.Fatalf("want one private mariadbd on %s, found %v", dir, pids)
	}
	checkServedApp(t, cmd, info, stderr)
	if pids := processesMentioning(filepath.Join(dir, "mysql")); len(pids) > 0 {
		t.Errorf("mariadbd left running after serve stopped: %v", pids)
	}
	// The socket's directory goes with the server.
	sock := strings.TrimSuffix(info.Services[0][strings.Index(info.Services[0], "/tmp/"):], ")")
	if _, err := os.Stat(filepath.Dir(sock)); !os.IsNotExist(err) {
		t.Errorf("the private MariaDB's socket dir %s is left after serve stopped", filepath.Dir(sock))
	}
}

// Ctrl-C in the middle of preparing WordPress (its private MariaDB running) leaves nothing: no directory,
// no staging directory, no server.
func TestWorkloadWordPressPrepareInterrupted(t *testing.T) {
	data := t.TempDir()
	t.Setenv("XDG_DATA_HOME", data)
	dir := filepath.Join(data, "phptune", "workloads", "wordpress")
	cmd := exec.Command(binPath(t), "workload", "prepare", "wordpress")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "installing the site") {
			break
		}
	}
	if pids := processesMentioning(dir + ".partial/mysql"); len(pids) != 1 {
		t.Errorf("want the private mariadbd running while the site installs, found %v", pids)
	}
	cmd.Process.Signal(syscall.SIGINT)
	go func() {
		for sc.Scan() {
		}
	}()
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Errorf("prepare after Ctrl-C: exit %d, want 130", code)
	}
	for _, d := range []string{dir, dir + ".partial"} {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s left after an interrupted prepare", d)
		}
	}
	if pids := processesMentioning(dir); len(pids) > 0 {
		t.Errorf("processes left after an interrupted prepare: %v", pids)
	}
}

func TestWorkloadMediaWiki(t *testing.T) {
	prepareByName(t, "mediawiki")
	cmd, info, stderr := serveApp(t, "mediawiki")
	checkServedApp(t, cmd, info, stderr)
}

// The framework hello-worlds: served by name with their markers, and a warm request includes at least 100
// PHP files (the case where opcache matters tenfold).
func TestWorkloadFrameworks(t *testing.T) {
	for _, name := range []string{"laravel", "symfony"} {
		t.Run(name, func(t *testing.T) {
			dir := prepareByName(t, name)
			w, err := workload.OpenDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			u := w.Manifest.URLs[0]
			n, err := workload.IncludedFiles(context.Background(), w.Docroot(), w.Manifest.Front, u.Path, u.Marker)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s %s includes %d PHP files", name, u.Path, n)
			if n < 100 {
				t.Errorf("%s %s includes %d PHP files, want at least 100", name, u.Path, n)
			}
			cmd, info, stderr := serveApp(t, name)
			checkServedApp(t, cmd, info, stderr)
		})
	}
}

// tune by name: the preset's URLs and markers drive it, and its recommendation comes out.
func TestWorkloadTuneByName(t *testing.T) {
	prepareByName(t, "symfony")
	out := t.TempDir()
	r := phptune(t, "tune", "symfony", "--budget", "3m", "--out", out)
	if r.code != 0 {
		t.Fatalf("tune symfony: exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	var res struct {
		App  string `json:"app"`
		URLs []struct {
			URI string `json:"uri"`
		} `json:"urls"`
	}
	data, err := os.ReadFile(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &res); err != nil || !strings.Contains(res.App, "symfony") {
		t.Fatalf("result.json: %v, app %q", err, res.App)
	}
	if !strings.Contains(string(data), "/hello/phptune") {
		t.Errorf("result.json does not mention the preset's URL /hello/phptune")
	}
}

// A private MariaDB that dies under a running serve stops it with a clear error, and nothing is left.
func TestWorkloadWordPressServiceDies(t *testing.T) {
	dir := prepareByName(t, "wordpress")
	cmd, info, stderr := serveApp(t, "wordpress")
	pids := processesMentioning(filepath.Join(dir, "mysql"))
	if len(pids) != 1 {
		t.Fatalf("want one private mariadbd, found %v", pids)
	}
	syscall.Kill(pids[0], syscall.SIGKILL)
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("serve went on after its database died")
	}
	if code := cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(stderr.String(), "a service of the app exited") {
		t.Errorf("serve after its database died: exit %d, stderr %q", code, stderr.String())
	}
	if left := processesMentioning(info.RunDir); len(left) > 0 {
		t.Errorf("processes left: %v", left)
	}
}

// A private MariaDB that dies under a running tune stops it with a clear error (exit 1), its results so far
// kept as partial, and nothing left running.
func TestWorkloadWordPressServiceDiesUnderTune(t *testing.T) {
	dir := prepareByName(t, "wordpress")
	out := t.TempDir()
	w := startWatched(t, nil, "tune", "wordpress", "--budget", "3m", "--out", out)
	// Into the trials: the private mariadbd up and the run's first measuring step done (a second progress line).
	var pids []int
	w.until(t, "the run measuring with its mariadbd", func() bool {
		pids = processesMentioning(filepath.Join(dir, "mysql"))
		return len(pids) == 1 && tuneLines(w.se.String()) >= 2
	})
	syscall.Kill(pids[0], syscall.SIGKILL)
	select {
	case <-w.exited:
	case <-time.After(90 * time.Second):
		t.Fatal("tune went on after its database died")
	}
	if code := w.code(); code != 1 || !strings.Contains(w.se.String(), "a service of the app exited unexpectedly (mariadb") {
		t.Errorf("tune after its database died: exit %d, stderr %q", code, w.se.String())
	}
	if b, err := os.ReadFile(filepath.Join(out, "result.json")); err == nil && !strings.Contains(string(b), `"partial": true`) {
		t.Errorf("result.json kept but not marked partial")
	}
	if left := processesMentioning(dir); len(left) > 0 {
		t.Errorf("processes left: %v", left)
	}
}

// tune wordpress logs in before the run and measures the dashboard with the session beside the public pages:
// the dashboard's marker ("At a Glance") is only on a logged-in page (logged out, wp-admin redirects).
func TestWorkloadWordPressLoggedInPage(t *testing.T) {
	prepareByName(t, "wordpress")
	out := t.TempDir()
	r := phptune(t, "tune", "wordpress", "--only", "none", "--budget", "60s", "--out", out)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	res := readTuneFile(t, filepath.Join(out, "result.json"))
	found := false
	for _, u := range res.URLs {
		found = found || (u.Path == "/wp-admin/index.php" && u.PeakMemory > 0)
	}
	if !found {
		t.Errorf("the dashboard is not in the mix, or its memory was not read: %+v", res.URLs)
	}
	t.Logf("\n%s", r.stdout)
}

// TestWorkloadLaravelLoggedInPage: the Laravel preset's dashboard is measured signed in (the login posted once,
// its session cookie sent with the dashboard), beside the public pages.
func TestWorkloadLaravelLoggedInPage(t *testing.T) {
	prepareByName(t, "laravel")
	out := t.TempDir()
	r := phptune(t, "tune", "laravel", "--only", "none", "--budget", "60s", "--out", out)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	res := readTuneFile(t, filepath.Join(out, "result.json"))
	found := false
	for _, u := range res.URLs {
		found = found || (u.Path == "/dashboard" && u.PeakMemory > 0)
	}
	if !found {
		t.Errorf("the dashboard is not in the mix, or its memory was not read: %+v", res.URLs)
	}
}
