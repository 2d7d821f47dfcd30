package stack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/fcgi"
	"github.com/phptune/phptune/internal/loopback"
	"github.com/phptune/phptune/internal/measure"
	"github.com/phptune/phptune/workloads"
)

func startDemo(t *testing.T, cfg Config) *Stack {
	t.Helper()
	if cfg.App == "" && cfg.AppFS == nil {
		cfg.AppFS = workloads.Demo()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := Start(ctx, cfg)
	if err != nil {
		t.Fatalf("start stack (needs php8.2-fpm and nginx, and for Apache apache2 and libapache2-mod-php8.2: make deps): %v", err)
	}
	t.Cleanup(func() { s.Stop(context.Background()) })
	return s
}

// groupPIDs lists the processes of the stack's process groups, read from /proc.
func groupPIDs(t *testing.T, pgids ...int) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		pg, err := syscall.Getpgid(pid)
		if err != nil {
			continue
		}
		for _, g := range pgids {
			if pg == g {
				out = append(out, pid)
			}
		}
	}
	return out
}

// checkDemoRoutes sends the demo's routes over HTTP: each answers with its status and content marker, a form
// post included.
func checkDemoRoutes(t *testing.T, s *Stack) {
	t.Helper()
	if !strings.HasPrefix(s.HTTPURL, "http://127.0.0.1:") {
		t.Fatalf("HTTPURL %q", s.HTTPURL)
	}
	client := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	defer client.CloseIdleConnections() // a kept connection holds a prefork Apache's process until it stops
	cases := []struct {
		method, path, body string
		status             int
		marker             string
	}{
		{"GET", "", "", 200, "phptune-demo:list"},
		{"GET", "articles?page=2", "", 200, "phptune-demo:list"},
		{"GET", "articles/3", "", 200, "phptune-demo:detail"},
		{"GET", "articles/999999", "", 404, "phptune-demo:notfound"},
		{"GET", "api/articles", "", 200, `"phptune-demo:api"`},
		{"GET", "contact", "", 200, "phptune-demo:form"},
		{"POST", "contact", "name=Ada&email=ada%40example.org&message=" + url.QueryEscape("Hello there, this is a message."), 200, "phptune-demo:contact"},
		{"POST", "contact", "name=&email=nope&message=", 422, "phptune-demo:invalid"},
		{"GET", "remote", "", 200, "phptune-demo:remote"},
		{"GET", "no/such/page", "", 404, "phptune-demo:notfound"},
	}
	for _, c := range cases {
		req, _ := http.NewRequest(c.method, s.HTTPURL+c.path, strings.NewReader(c.body))
		if c.body != "" {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s /%s: %v", c.method, c.path, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("%s /%s: status %d, want %d; body %.300s", c.method, c.path, resp.StatusCode, c.status, body)
		}
		if !strings.Contains(string(body), c.marker) {
			t.Errorf("%s /%s: no marker %q in %.300s", c.method, c.path, c.marker, body)
		}
	}
}

func TestDemoRoutesOverHTTPAndFastCGI(t *testing.T) {
	s := startDemo(t, Config{})
	checkDemoRoutes(t, s)
	// Both pools answer FastCGI directly, with the front controller routing on REQUEST_URI.
	for _, ep := range s.Pools {
		params := fcgi.CGIParams(fcgi.CGIOptions{ScriptFilename: s.Script(), DocumentRoot: s.Docroot, ScriptName: "/index.php", RequestURI: "/articles/2"})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		status, body, stderr, err := fcgi.Get(ctx, ep.Network, ep.Address, params)
		cancel()
		if err != nil || status != 200 || !strings.Contains(string(body), "phptune-demo:detail") || len(stderr) != 0 {
			t.Errorf("pool %s: status %d err %v stderr %q body %.200s", ep.Name, status, err, stderr, body)
		}
	}
}

// The servers' CPU time grows with the requests they serve: the demo's routes cost php-fpm milliseconds each.
func TestServersCPUCountsTheRequests(t *testing.T) {
	s := startDemo(t, Config{})
	before, err := s.ServersCPU()
	if err != nil {
		t.Fatal(err)
	}
	checkDemoRoutes(t, s)
	after, err := s.ServersCPU()
	if err != nil || after <= before {
		t.Errorf("CPU %v before the requests, %v (%v) after: want more", before, after, err)
	}
}

func TestStopLeavesNothingBehind(t *testing.T) {
	runDir := filepath.Join(t.TempDir(), "run")
	s := startDemo(t, Config{RunDir: runDir})
	pgids := []int{s.PID("php-fpm"), s.PID("nginx")}
	if pgids[0] == 0 || pgids[1] == 0 {
		t.Fatalf("pids %v", pgids)
	}
	if n := len(groupPIDs(t, pgids...)); n < 4 {
		t.Fatalf("expected masters and workers running, found %d processes", n)
	}
	sock := s.Pools[0].Address
	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if left := groupPIDs(t, pgids...); len(left) > 0 {
		t.Fatalf("processes left after Stop: %v", left)
	}
	if _, err := os.Stat(sock); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket %s still there: %v", sock, err)
	}
	if _, err := os.Stat(s.PrivDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("private dir %s still there", s.PrivDir)
	}
	for _, f := range []string{"php-fpm.conf", "nginx.conf", "php-fpm.log", "nginx-error.log"} {
		if _, err := os.Stat(filepath.Join(runDir, f)); err != nil {
			t.Errorf("run dir lacks %s: %v", f, err)
		}
	}
	// Stop is idempotent.
	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestPortInUseIsAUsageError(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	_, err = Start(context.Background(), Config{AppFS: workloads.Demo(), HTTPPort: port})
	if err == nil || exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("err = %v (code %d), want a usage error saying the port is in use", err, exitcode.Of(err))
	}
}

func TestBadInput(t *testing.T) {
	notDir := filepath.Join(t.TempDir(), "file")
	os.WriteFile(notDir, []byte("x"), 0o644)
	noFront := t.TempDir()
	for name, cfg := range map[string]Config{
		"app not a dir":     {App: notDir},
		"no front":          {App: noFront},
		"php-fpm not found": {AppFS: workloads.Demo(), PHPFPM: "/nonexistent/php-fpm"},
		"bad pm":            {AppFS: workloads.Demo(), Pools: []Pool{{Name: "x", Listen: ListenUnix, PM: "lazy"}}},
	} {
		_, err := Start(context.Background(), cfg)
		if exitcode.Of(err) != exitcode.Usage {
			t.Errorf("%s: err = %v (code %d), want usage error", name, err, exitcode.Of(err))
		}
	}
}

func TestBrokenConfigReportsWhy(t *testing.T) {
	// A pool directive php-fpm rejects: Start must fail with php-fpm's reason and leave nothing running.
	_, err := Start(context.Background(), Config{AppFS: workloads.Demo(), NoNginx: true,
		Pools: []Pool{{Name: "x", Listen: ListenUnix, Extra: []string{"pm.bogus_directive = 3"}}}})
	if err == nil || !strings.Contains(err.Error(), "php-fpm") {
		t.Fatalf("err = %v, want php-fpm's complaint", err)
	}
}

// The knobs that reach the master and nginx: a preload script found through the served docroot, nginx
// directives in the PHP location, and opcache's move of PHP's text to huge pages.
func TestDefinesAndNginxDirectives(t *testing.T) {
	cfg := Config{
		Pools:    []Pool{{Name: "p", Listen: ListenUnix, PM: "static", MaxChildren: 1}},
		Defines:  map[string]string{"opcache.preload": DocrootVar + "/preload.php", "opcache.huge_code_pages": "1"},
		NginxPHP: []string{"fastcgi_buffers 16 16k", "fastcgi_buffer_size 16k;"},
	}
	s := startDemo(t, cfg)
	conf, err := os.ReadFile(filepath.Join(s.RunDir, "nginx.conf"))
	if err != nil || !strings.Contains(string(conf), "fastcgi_buffers 16 16k;\n") || !strings.Contains(string(conf), "fastcgi_buffer_size 16k;\n") {
		t.Fatalf("nginx.conf lacks the directives (%v):\n%s", err, conf)
	}
	probe := `<?php $s = opcache_get_status(false); echo json_encode(["preloaded" => count($s["preload_statistics"]["classes"] ?? [])]);`
	if err := os.WriteFile(filepath.Join(s.Docroot, "probe.php"), []byte(probe), 0o644); err != nil {
		t.Fatal(err)
	}
	body := get(t, s.HTTPURL+"/probe.php")
	var got struct{ Preloaded int }
	if err := json.Unmarshal([]byte(body), &got); err != nil || got.Preloaded < 50 {
		t.Errorf("preload: want the demo's classes preloaded, got %q (%v)", body, err)
	}
	if b := get(t, s.HTTPURL+"/articles"); !strings.Contains(b, "phptune-demo:list") {
		t.Errorf("with preload the listing breaks: %.300s", b)
	}
	// opcache moves only the 2 MiB-aligned pages inside the text: whether Debian's 3 MiB text holds one
	// depends on where the loader put it (ASLR), so a few starts are allowed. Once moved, with THP available,
	// the copy must sit on huge pages.
	thp, _ := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	var hp *measure.HugePages
	const starts = 20
	for start := 1; start <= starts; start++ {
		if start > 1 {
			s.Stop(context.Background())
			s = startDemo(t, cfg)
		}
		if hp, err = measure.ReadHugePages(s.PID("php-fpm"), "1"); err != nil {
			t.Fatal(err)
		}
		if hp.TextRemapped {
			t.Logf("text moved at start %d: %d of %d KiB on huge pages", start, hp.TextHugeBytes>>10, hp.TextBytes>>10)
			break
		}
	}
	switch {
	case !hp.TextRemapped:
		t.Skipf("in %d starts the loader never put PHP's %d KiB text where it holds an aligned 2 MiB page: nothing for opcache to move", starts, hp.TextBytes>>10)
	case strings.Contains(string(thp), "[never]") && hp.HugePagesTotal == 0:
		if hp.TextHugeBytes > 0 {
			t.Errorf("THP is off and no huge page reserved, yet text on huge pages: %+v", hp)
		}
	case hp.TextHugeBytes == 0:
		t.Errorf("THP is %q and opcache moved the text, yet smaps shows none of it on huge pages: %+v", strings.TrimSpace(string(thp)), hp)
	}
}

func get(t *testing.T, url string) string {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %s: %.300s", url, resp.Status, b)
	}
	return string(b)
}

// opcache caches the served copy from the first request: the copy's files are dated back beyond
// opcache.file_update_protection (2 s).
func TestServedCopyIsCachedAtOnce(t *testing.T) {
	s := startDemo(t, Config{Pools: []Pool{{Name: "p", Listen: ListenUnix, PM: "static", MaxChildren: 1}}})
	get(t, s.HTTPURL+"/articles")
	script, err := measure.WriteOpcacheScript(s.PrivDir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	oc, err := measure.ReadOpcache(ctx, s.Pools[0].Network, s.Pools[0].Address, script)
	if err != nil {
		t.Fatal(err)
	}
	if !oc.Enabled || oc.CachedScripts < 20 {
		t.Errorf("right after start, one request cached %d scripts (opcache enabled %v): want the demo's files cached", oc.CachedScripts, oc.Enabled)
	}
}

// TestPortTakenBetweenPickAndBind: a port phptune picked that another process binds first costs a new start
// with another port, not the run: nginx's port, or a TCP pool's (php-fpm's last line, "FPM initialization
// failed", hides the bind error before it; CI saw a pool's port taken by an outgoing connection).
func TestPortTakenBetweenPickAndBind(t *testing.T) {
	for _, cfg := range []Config{{Pools: []Pool{{Name: "unix", Listen: ListenUnix}}},
		{Pools: []Pool{{Name: "tcp", Listen: ListenTCP}}, NoNginx: true}} {
		thief, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer thief.Close()
		taken := thief.Addr().(*net.TCPAddr).Port
		picks := 0
		cfg.portPicker = func() (int, error) {
			picks++
			if picks == 1 {
				return taken, nil
			}
			return loopback.FreePort()
		}
		s := startDemo(t, cfg)
		url := s.HTTPURL
		if cfg.NoNginx {
			ep, _ := s.Pool("tcp")
			url = ep.Address
		}
		if strings.Contains(url, fmt.Sprintf(":%d", taken)) || picks < 2 {
			t.Errorf("%s: served on %s after %d picks; the taken port was %d", cfg.Pools[0].Name, url, picks, taken)
		}
		if !cfg.NoNginx {
			get(t, s.HTTPURL)
		}
	}
}

// TestStaleDirsAreSwept: a private dir whose phptune died without cleaning up (SIGKILL) is removed by the next
// start; one whose owner lives is left alone.
func TestStaleDirsAreSwept(t *testing.T) {
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	stale, err := os.MkdirTemp("/tmp", "phptune-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(stale)
	os.WriteFile(filepath.Join(stale, OwnerFile), []byte(strconv.Itoa(dead.Process.Pid)), 0o600)
	live, err := os.MkdirTemp("/tmp", "phptune-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(live)
	os.WriteFile(filepath.Join(live, OwnerFile), []byte(strconv.Itoa(os.Getpid())), 0o600)
	startDemo(t, Config{NoNginx: true})
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale dir %s survived the next start (%v)", stale, err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("a live run's dir %s was removed: %v", live, err)
	}
}

// TestCheckPHPComesBeforeTheHTTPServer: CheckPHP is asked about php-fpm's master before nginx starts, and a start
// it refuses leaves nothing running.
func TestCheckPHPComesBeforeTheHTTPServer(t *testing.T) {
	port, err := loopback.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	var master int
	var comm []byte
	var listening error
	refuse := errors.New("refused")
	cfg := Config{AppFS: workloads.Demo(), HTTPPort: port, CheckPHP: func(pid int) error {
		master = pid
		comm, _ = os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			listening = errors.New("nginx listens already")
		}
		return refuse
	}}
	_, err = Start(context.Background(), cfg)
	if !errors.Is(err, ErrCheckPHP) || !errors.Is(err, refuse) {
		t.Fatalf("a start CheckPHP refuses: %v", err)
	}
	if listening != nil {
		t.Error(listening)
	}
	if !strings.HasPrefix(string(comm), "php-fpm") {
		t.Errorf("CheckPHP was given pid %d (%q): want php-fpm's master", master, comm)
	}
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", master)); err == nil {
		t.Errorf("php-fpm's master (pid %d) still runs after the start was refused", master)
	}
}
