package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/workload"
)

type wlServeInfo struct {
	serveInfo
	URLs []struct {
		Path       string `json:"path"`
		ExpectBody string `json:"expect_body"`
	} `json:"urls"`
	Services []string `json:"services"`
}

// serveApp runs `phptune serve APP --json` and returns once it printed its endpoints and URL mix.
func serveApp(t *testing.T, app string) (*exec.Cmd, wlServeInfo, *strings.Builder) {
	t.Helper()
	cmd := exec.Command(binPath(t), "serve", app, "--json", "--for", "3m")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Signal(syscall.SIGINT)
			cmd.Wait()
		}
	})
	var info wlServeInfo
	done := make(chan error, 1)
	go func() { done <- json.NewDecoder(bufio.NewReader(stdout)).Decode(&info); io.Copy(io.Discard, stdout) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve %s: %v; stderr: %s", app, err, stderr.String())
		}
	case <-time.After(90 * time.Second):
		t.Fatalf("serve %s did not come up; stderr: %s", app, stderr.String())
	}
	if info.Schema != "phptune/serve/v1" || len(info.URLs) == 0 {
		t.Fatalf("serve %s printed %+v", app, info)
	}
	return cmd, info, &stderr
}

// benchChecked benches url with the marker as --expect-body and returns the requests and errors counted.
func benchChecked(t *testing.T, url, marker string, extra ...string) (requests, errors int64, classes map[string]int64) {
	t.Helper()
	args := append([]string{"bench", url, "-c", "2", "-n", "40", "--warmup", "0", "--expect-body", marker, "--json"}, extra...)
	r := phptune(t, args...)
	var res struct {
		Requests      int64            `json:"requests"`
		Errors        int64            `json:"errors"`
		ErrorsByClass map[string]int64 `json:"errors_by_class"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatalf("bench %s: exit %d: %v: %s %s", url, r.code, err, r.stdout, r.stderr)
	}
	return res.Requests, res.Errors, res.ErrorsByClass
}

// checkServedApp benches every URL of a served preset with its marker, over HTTP and FastCGI, then a wrong
// marker (which must fail: the check is real), stops serve with Ctrl-C and checks that nothing is left.
func checkServedApp(t *testing.T, cmd *exec.Cmd, info wlServeInfo, stderr *strings.Builder) {
	t.Helper()
	base := strings.TrimSuffix(info.HTTP, "/")
	for _, u := range info.URLs {
		if n, errs, cl := benchChecked(t, base+u.Path, u.ExpectBody); n != 40 || errs != 0 {
			t.Errorf("bench %s --expect-body %q: %d requests, %d errors %v", u.Path, u.ExpectBody, n, errs, cl)
		}
	}
	u := info.URLs[len(info.URLs)-1]
	target := fcgiTarget(info.FastCGITCP.Target, u.Path)
	host := "Host: " + strings.TrimSuffix(strings.TrimPrefix(info.HTTP, "http://"), "/")
	if n, errs, cl := benchChecked(t, target, u.ExpectBody, "--request-uri", u.Path, "-H", host); n != 40 || errs != 0 {
		t.Errorf("bench %s --request-uri %s: %d requests, %d errors %v", target, u.Path, n, errs, cl)
	}
	if _, errs, cl := benchChecked(t, base+u.Path, "no such marker phptune-xyzzy"); errs != 40 || cl["body"] != 40 {
		t.Errorf("a wrong marker gave %d errors %v: want every response counted as a body error", errs, cl)
	}
	cmd.Process.Signal(syscall.SIGINT)
	if err := cmd.Wait(); cmd.ProcessState.ExitCode() != 130 {
		t.Fatalf("serve after Ctrl-C: %v; stderr: %s", err, stderr.String())
	}
	if left := processesMentioning(info.RunDir); len(left) > 0 {
		t.Errorf("processes left after serve stopped: %v", left)
	}
}

func TestWorkloadBadInput(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	for _, args := range [][]string{{"workload", "prepare", "joomla"}, {"serve", "joomla"}, {"tune", "joomla"}} {
		r := phptune(t, args...)
		if r.code != 2 {
			t.Errorf("%v: exit %d, want 2; stderr %q", args, r.code, r.stderr)
		}
		for _, n := range workload.Names() {
			if !strings.Contains(r.stderr, n) {
				t.Errorf("%v: stderr %q does not list preset %s", args, r.stderr, n)
			}
		}
	}
	r := phptune(t, "serve", "dokuwiki")
	if r.code != 2 || !strings.Contains(r.stderr, "phptune workload prepare dokuwiki") {
		t.Errorf("serve unprepared dokuwiki: exit %d, stderr %q: want exit 2 saying how to prepare it", r.code, r.stderr)
	}
	r = phptune(t, "workload", "list")
	if r.code != 0 || !strings.Contains(r.stdout, "demo") || !strings.Contains(r.stdout, "embedded") || !strings.Contains(r.stdout, "dokuwiki") {
		t.Errorf("workload list: exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
}

func TestWorkloadDemoByName(t *testing.T) {
	cmd, info, stderr := serveApp(t, "demo")
	if len(info.URLs) != 4 || info.URLs[0].ExpectBody == "" {
		t.Fatalf("demo's URLs: %+v", info.URLs)
	}
	checkServedApp(t, cmd, info, stderr)
}

// TestWorkloadDokuWiki prepares DokuWiki by name into a data dir of its own, prepares it again (harmless),
// serves it by name and benches every URL with its content marker.
func TestWorkloadDokuWiki(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	start := time.Now()
	r := phptune(t, "workload", "prepare", "dokuwiki")
	if r.code != 0 || !strings.Contains(r.stdout, "dokuwiki prepared in") || !strings.Contains(r.stdout, "doku.php?id=start") {
		t.Fatalf("prepare dokuwiki: exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	t.Logf("dokuwiki prepared in %s", time.Since(start).Round(time.Millisecond))
	r = phptune(t, "workload", "prepare", "dokuwiki")
	if r.code != 0 || !strings.Contains(r.stdout, "already prepared") {
		t.Fatalf("prepare dokuwiki again: exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	r = phptune(t, "workload", "list")
	if !regexp.MustCompile(`(?m)^dokuwiki +yes`).MatchString(r.stdout) {
		t.Errorf("workload list does not show dokuwiki prepared:\n%s", r.stdout)
	}
	cmd, info, stderr := serveApp(t, "dokuwiki")
	if len(info.URLs) != 3 {
		t.Fatalf("dokuwiki's URLs: %+v", info.URLs)
	}
	checkServedApp(t, cmd, info, stderr)
	if t.Failed() {
		return
	}
	// build --train by name (the fake toolchain, Debian's php-cgi): trained on the preset's URLs, in a copy of its
	// tree, each answer checked for its marker; held out on the demo app.
	dir, src, mk := fakeSource(t)
	buildArgs := []string{"build", "--train", "dokuwiki", "--source", src, "--make", mk, "--cache", filepath.Join(dir, "cache"),
		"--out", filepath.Join(dir, "out"), "--variants", "pgo", "--no-verify", "--train-n", "1", "--json"}
	r = phptune(t, buildArgs...)
	var br buildJSON
	if err := json.Unmarshal([]byte(r.stdout), &br); err != nil || r.code != 0 || br.App != "dokuwiki" || len(br.Train) != 3 || len(br.Variants) != 1 {
		t.Fatalf("build --train dokuwiki: exit %d, %v: %s %s", r.code, err, r.stdout, r.stderr)
	}
	// Training passed (the fake make writes no profiles): pgo is unavailable for that reason only.
	if v := br.Variants[0]; !strings.Contains(v.Reason, "no PGO profiles") {
		t.Errorf("build --train dokuwiki: pgo %+v: want training to pass every content check", v)
	}
	if len(br.Holdout) == 0 || br.Holdout[0] != "/" {
		t.Errorf("held-out URLs %v: want the demo app's routes", br.Holdout)
	}
	if len(processesMentioning("dokuwiki")) > 0 {
		t.Errorf("processes left after build: %v", processesMentioning("dokuwiki"))
	}

	// A page that lost its content still answers 200: tune and build by name must refuse it through the
	// preset's marker.
	page := filepath.Join(os.Getenv("XDG_DATA_HOME"), "phptune", "workloads", "dokuwiki", "docroot", "data", "pages", "tuning", "note_07.txt")
	if err := os.Remove(page); err != nil {
		t.Fatal(err)
	}
	r = phptune(t, buildArgs...)
	br = buildJSON{}
	if err := json.Unmarshal([]byte(r.stdout), &br); err != nil || len(br.Variants) != 1 || !strings.Contains(br.Variants[0].Reason, "content check") {
		t.Errorf("build --train dokuwiki with a page gone: exit %d, %v: %s %s: want pgo unavailable naming the content check", r.code, err, r.stdout, r.stderr)
	}
	r = phptune(t, "tune", "dokuwiki", "--budget", "1m", "--out", t.TempDir())
	if r.code != 2 || !strings.Contains(r.stderr, "note_07 fails") || !strings.Contains(r.stderr, "without the expected content") {
		t.Errorf("tune dokuwiki with a page gone: exit %d, stderr %q: want exit 2 naming the failed content check", r.code, r.stderr)
	}
}
