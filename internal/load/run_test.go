package load

import (
	"context"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/stack"
	"github.com/phptune/phptune/workloads"
)

// testApp is the demo app plus scripts that produce each error class.
var testScripts = map[string]string{
	"warn.php":  `<?php trigger_error("phptune test warning", E_USER_WARNING); echo "warned";`,
	"fail.php":  `<?php http_response_code(500); echo "failed";`,
	"fatal.php": `<?php undefined_function_for_phptune();`,
	"hello.php": `<?php echo "hello ", $_SERVER["REQUEST_METHOD"], " ", $_GET["x"] ?? "-", " ", file_get_contents("php://input");`,
}

func startApp(t *testing.T) *stack.Stack {
	t.Helper()
	dir := t.TempDir()
	err := fs.WalkDir(workloads.Demo(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, p)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := fs.ReadFile(workloads.Demo(), p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, src := range testScripts {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := stack.Start(ctx, stack.Config{App: dir})
	if err != nil {
		t.Fatalf("start stack (needs php8.2-fpm and nginx: make deps): %v", err)
	}
	t.Cleanup(func() { s.Stop(context.Background()) })
	return s
}

func mustTarget(t *testing.T, s string) Target {
	t.Helper()
	tg, err := ParseTarget(s)
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

func TestBenchDemoOverEveryTransport(t *testing.T) {
	s := startApp(t)
	unixEP, _ := s.Pool("unix")
	tcpEP, _ := s.Pool("tcp")
	targets := map[string]Target{
		"http":      mustTarget(t, s.HTTPURL+"articles"),
		"fcgi-tcp":  mustTarget(t, tcpEP.URL(s.Script())),
		"fcgi-unix": mustTarget(t, unixEP.URL(s.Script())),
	}
	for name, tg := range targets {
		if tg.Protocol == FastCGI {
			tg.RequestURI = "/articles"
		}
		res, err := Run(context.Background(), Options{Target: tg, Request: Request{KeepAlive: true}, Connections: 4, Requests: 300,
			Warmup: 200 * time.Millisecond, Timeout: 10 * time.Second, ExpectBody: regexp.MustCompile(`phptune-demo:list`)})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if res.Requests != 300 || res.Errors != 0 || res.StatusCodes["200"] != 300 {
			t.Errorf("%s: requests %d errors %d %v statuses %v", name, res.Requests, res.Errors, res.ErrorSamples, res.StatusCodes)
		}
		if res.Latency.P50 <= 0 || res.Latency.Max < res.Latency.P99 || res.RPS <= 0 || res.Bytes <= 0 {
			t.Errorf("%s: implausible result %+v", name, res.Latency)
		}
		if res.ClientCPUUsPerReq <= 0 {
			t.Errorf("%s: client CPU per request %v", name, res.ClientCPUUsPerReq)
		}
		if res.Schema != SchemaBench || res.Partial {
			t.Errorf("%s: schema %q partial %v", name, res.Schema, res.Partial)
		}
	}
}

func TestBenchPostAndParams(t *testing.T) {
	s := startApp(t)
	tcpEP, _ := s.Pool("tcp")
	for _, raw := range []string{s.HTTPURL + "hello.php?x=42", tcpEP.URL(filepath.Join(s.Docroot, "hello.php")) + "?x=42"} {
		tg := mustTarget(t, raw)
		res, err := Run(context.Background(), Options{Target: tg, Connections: 2, Requests: 50, Timeout: 5 * time.Second,
			Request:    Request{Method: "POST", Body: []byte("payload"), KeepAlive: true, Headers: [][2]string{{"Content-Type", "text/plain"}}},
			ExpectBody: regexp.MustCompile(`^hello POST 42 payload$`)})
		if err != nil || res.Errors != 0 || res.Requests != 50 {
			t.Fatalf("%s: err %v errors %v samples %v", raw, err, res.ErrorsByClass, res.ErrorSamples)
		}
	}
}

func TestErrorClasses(t *testing.T) {
	s := startApp(t)
	tcpEP, _ := s.Pool("tcp")
	fc := func(script string) Target { return mustTarget(t, tcpEP.URL(filepath.Join(s.Docroot, script))) }
	cases := []struct {
		name   string
		target Target
		opts   func(*Options)
		class  string
	}{
		{"php warning over FastCGI", fc("warn.php"), nil, ClassPHPStderr},
		{"500 over FastCGI", fc("fail.php"), nil, Class5xx},
		{"fatal error over FastCGI", fc("fatal.php"), nil, Class5xx},
		{"500 over HTTP", mustTarget(t, s.HTTPURL+"fail.php"), nil, Class5xx},
		{"404 over HTTP", mustTarget(t, s.HTTPURL+"missing.php"), nil, Class4xx},
		{"missing script over FastCGI, counted", fc("missing.php"), func(o *Options) { o.SkipPreflight = true }, Class4xx},
		{"body mismatch", mustTarget(t, s.HTTPURL+"hello.php"), func(o *Options) { o.ExpectBody = regexp.MustCompile("nothere") }, ClassBody},
		{"status outside --expect-status", mustTarget(t, s.HTTPURL+"hello.php"), func(o *Options) { o.ExpectStatus = []int{201} }, ClassStatus},
	}
	for _, c := range cases {
		o := Options{Target: c.target, Request: Request{KeepAlive: true}, Connections: 2, Requests: 40, Timeout: 5 * time.Second}
		if c.opts != nil {
			c.opts(&o)
		}
		res, err := Run(context.Background(), o)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if res.ErrorsByClass[c.class] != 40 || res.Errors != 40 {
			t.Errorf("%s: errors %v (total %d), want 40 of class %s; samples %v", c.name, res.ErrorsByClass, res.Errors, c.class, res.ErrorSamples)
		}
	}
	// The PHP warning's text reaches the sample, and its bytes are counted.
	res, err := Run(context.Background(), Options{Target: fc("warn.php"), Connections: 1, Requests: 5, Timeout: 5 * time.Second})
	if err != nil || res.StderrBytes == 0 || !strings.Contains(res.ErrorSamples[ClassPHPStderr], "phptune test warning") {
		t.Errorf("stderr bytes %d sample %q err %v", res.StderrBytes, res.ErrorSamples[ClassPHPStderr], err)
	}
	// An expected 404 is no error.
	res, err = Run(context.Background(), Options{Target: mustTarget(t, s.HTTPURL+"missing.php"), Connections: 1, Requests: 10,
		Timeout: 5 * time.Second, ExpectStatus: []int{404}})
	if err != nil || res.Errors != 0 {
		t.Errorf("expected 404: errors %v err %v", res.ErrorsByClass, err)
	}
}

func TestPreflightErrors(t *testing.T) {
	s := startApp(t)
	tcpEP, _ := s.Pool("tcp")
	closed := freeAddr(t)
	httpHost := strings.TrimSuffix(strings.TrimPrefix(s.HTTPURL, "http://"), "/")
	cases := map[string]struct {
		target string
		want   string
	}{
		"refused":           {"http://" + closed + "/", "cannot connect"},
		"refused fcgi":      {"fcgi://" + closed + "/x/index.php", "cannot connect"},
		"no socket file":    {"unix:/nonexistent/x.sock:/x/index.php", "cannot connect"},
		"HTTP port as fcgi": {"fcgi://" + httpHost + s.Script(), "does not speak FastCGI"},
		"primary script":    {tcpEP.URL("/nonexistent/script.php"), "Primary script unknown"},
	}
	for name, c := range cases {
		_, err := Run(context.Background(), Options{Target: mustTarget(t, c.target), Connections: 1, Requests: 1, Timeout: 3 * time.Second})
		if err == nil || exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: err %v (code %d), want a one-line usage error containing %q", name, err, exitcode.Of(err), c.want)
		}
	}
}

func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// hangServer accepts connections and never answers.
func hangServer(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().String()
}

func TestHangingServerTimesOut(t *testing.T) {
	for _, raw := range []string{"http://" + hangServer(t) + "/", "fcgi://" + hangServer(t) + "/x/index.php"} {
		tg := mustTarget(t, raw)
		start := time.Now()
		_, err := Run(context.Background(), Options{Target: tg, Connections: 2, Requests: 4, Timeout: 300 * time.Millisecond})
		if err == nil || !strings.Contains(err.Error(), "did not answer") || time.Since(start) > 1300*time.Millisecond {
			t.Errorf("%s preflight: err %v after %s", raw, err, time.Since(start))
		}
		start = time.Now()
		res, err := Run(context.Background(), Options{Target: tg, Connections: 2, Requests: 4, Timeout: 300 * time.Millisecond, SkipPreflight: true})
		el := time.Since(start)
		if err != nil {
			t.Fatal(err)
		}
		if res.ErrorsByClass[ClassTimeout] != 4 || res.Latency.Max < 299e3 || res.Latency.Max > 301e3 {
			t.Errorf("%s: errors %v, max latency %v us: want 4 timeouts recorded at 300ms", raw, res.ErrorsByClass, res.Latency.Max)
		}
		if el > 2*300*time.Millisecond+time.Second {
			t.Errorf("%s: took %s", raw, el)
		}
	}
}

func TestCancelStopsPromptlyWithPartialResult(t *testing.T) {
	s := startApp(t)
	for _, raw := range []string{s.HTTPURL + "remote", "http://" + hangServer(t) + "/", "fcgi://" + hangServer(t) + "/x/index.php"} {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(700*time.Millisecond, cancel)
		start := time.Now()
		res, err := Run(ctx, Options{Target: mustTarget(t, raw), Request: Request{KeepAlive: true}, Connections: 4,
			Duration: 30 * time.Second, Timeout: 20 * time.Second, SkipPreflight: true})
		cancel()
		if exitcode.Of(err) != exitcode.Interrupted || res == nil || !res.Partial {
			t.Fatalf("%s: err %v res %+v", raw, err, res)
		}
		if el := time.Since(start); el > 2*time.Second {
			t.Errorf("%s: cancel took %s to stop the run", raw, el)
		}
	}
}

// rawHTTPServer answers every request at once with the same bytes and allocates nothing per request, so the
// process's allocation count measures the generator alone.
func rawHTTPServer(t testing.TB) string { return newDelayServer(t, 0).addr }

func TestMemoryFlatInRequests(t *testing.T) {
	tg := mustTarget(t, "http://"+rawHTTPServer(t)+"/")
	mallocs := func(n int64) uint64 {
		var a, b runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&a)
		res, err := Run(context.Background(), Options{Target: tg, Request: Request{KeepAlive: true}, Connections: 4, Requests: n, Timeout: 5 * time.Second})
		runtime.ReadMemStats(&b)
		if err != nil || res.Errors != 0 {
			t.Fatalf("run: %v %v", err, res.ErrorSamples)
		}
		return b.Mallocs - a.Mallocs
	}
	small, large := mallocs(2000), mallocs(22000)
	perReq := float64(int64(large)-int64(small)) / 20000
	if perReq > 0.05 {
		t.Errorf("%.3f allocations per request (runs of 2,000 and 22,000 requests: %d and %d mallocs); want none on the hot path", perReq, small, large)
	}
}

func TestNoGoroutineLeak(t *testing.T) {
	tg := mustTarget(t, "http://"+rawHTTPServer(t)+"/")
	before := runtime.NumGoroutine()
	for i := 0; i < 3; i++ {
		if _, err := Run(context.Background(), Options{Target: tg, Request: Request{KeepAlive: true}, Connections: 8, Duration: 200 * time.Millisecond,
			Warmup: 100 * time.Millisecond, Timeout: time.Second, Progress: func(Progress) {}}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	// The test server's own connection goroutines end once the generator closes its connections.
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<16)
		t.Errorf("goroutines: %d before, %d after\n%s", before, n, buf[:runtime.Stack(buf, true)])
	}
}

func TestWeightedMixWithContentChecks(t *testing.T) {
	s := startApp(t)
	tcpEP, _ := s.Pool("tcp")
	mix := []MixItem{
		{URI: "/articles", Weight: 2, ExpectBody: regexp.MustCompile("phptune-demo:list")},
		{URI: "/api/articles/3", Weight: 1, ExpectBody: regexp.MustCompile("phptune-demo:api")},
	}
	for _, raw := range []string{s.HTTPURL, tcpEP.URL(s.Script())} {
		res, err := Run(context.Background(), Options{Target: mustTarget(t, raw), Request: Request{KeepAlive: true}, Connections: 2,
			Requests: 90, Timeout: 10 * time.Second, Mix: mix})
		if err != nil || res.Errors != 0 || res.Requests != 90 {
			t.Fatalf("%s: err %v errors %v %v", raw, err, res.ErrorsByClass, res.ErrorSamples)
		}
	}
	// A check that fails on one URL of the mix is caught, on that URL only.
	mix[1].ExpectBody = regexp.MustCompile("not-there")
	res, err := Run(context.Background(), Options{Target: mustTarget(t, s.HTTPURL), Request: Request{KeepAlive: true}, Connections: 1,
		Requests: 30, Timeout: 10 * time.Second, Mix: mix})
	if err != nil || res.ErrorsByClass[ClassBody] != 10 {
		t.Errorf("err %v errors %v: want the 10 API requests of 30 to fail their check", err, res.ErrorsByClass)
	}
}

// TestEvenRunsServeTheSameRequests: with Even, every connection sends whole cycles of the mix, so a run serves
// each URL its exact share, however fast each connection is (one URL here fails its check on purpose, to
// count it).
func TestEvenRunsServeTheSameRequests(t *testing.T) {
	s := startApp(t)
	mix := []MixItem{
		{URI: "/articles", Weight: 2, ExpectBody: regexp.MustCompile("phptune-demo:list")},
		{URI: "/api/articles/3", Weight: 1, ExpectBody: regexp.MustCompile("not-there")},
	}
	for i := 0; i < 3; i++ {
		res, err := Run(context.Background(), Options{Target: mustTarget(t, s.HTTPURL), Request: Request{KeepAlive: true}, Connections: 4,
			Requests: 25, Timeout: 10 * time.Second, Mix: mix, Even: true})
		if err != nil {
			t.Fatal(err)
		}
		// 25 over 4 connections is 7 each, rounded up to whole cycles of 3: 9 each, 36 in all, a third of them API.
		if res.Requests != 36 || res.ErrorsByClass[ClassBody] != 12 {
			t.Fatalf("run %d: %d requests, %d API: want 36 and 12", i, res.Requests, res.ErrorsByClass[ClassBody])
		}
	}
}

// TestTailP99CountsWhatTheWindowCut: one request in fifty takes 800 ms, longer than the 300 ms window, so the
// window's own p99 leaves them out (each is in flight at its close); with Drain they are answered, and TailP99
// counts them.
func TestTailP99CountsWhatTheWindowCut(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d := 2 * time.Millisecond
		if n.Add(1)%50 == 0 {
			d = 800 * time.Millisecond
		}
		time.Sleep(d)
		_, _ = w.Write([]byte("ok"))
	}))
	defer srv.Close()
	res, err := Run(context.Background(), Options{Target: mustTarget(t, srv.URL+"/"), Request: Request{KeepAlive: true}, Connections: 8,
		Warmup: 100 * time.Millisecond, Duration: 300 * time.Millisecond, Timeout: 5 * time.Second, SkipPreflight: true, Drain: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Latency.P99 >= 800e3 || res.TailP99() < 800e3 {
		t.Errorf("window's p99 %.0f us, with the drained %.0f us: want the 800 ms requests only in the second", res.Latency.P99, res.TailP99())
	}
}

// TestDrainAnswersWhatWasInFlight: with Drain, the requests in flight when the window closes are answered and
// counted in Served (every request sent), not in the window; without it they are cut and only the answered
// ones are served.
func TestDrainAnswersWhatWasInFlight(t *testing.T) {
	var got atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Add(1)
		time.Sleep(150 * time.Millisecond)
		_, _ = w.Write([]byte("ok"))
	}))
	defer srv.Close()
	for _, drain := range []bool{true, false} {
		got.Store(0)
		res, err := Run(context.Background(), Options{Target: mustTarget(t, srv.URL+"/"), Request: Request{KeepAlive: true}, Connections: 4,
			Warmup: 200 * time.Millisecond, Duration: 500 * time.Millisecond, Timeout: 5 * time.Second, SkipPreflight: true, Drain: drain})
		if err != nil {
			t.Fatal(err)
		}
		sent := got.Load()
		if res.InFlightAtEnd < 1 || res.Requests < 4 || res.Errors != 0 {
			t.Fatalf("drain %v: %d requests in the window, %d in flight at its end, %d errors", drain, res.Requests, res.InFlightAtEnd, res.Errors)
		}
		if drain && res.Served != sent {
			t.Errorf("drain: served %d of %d sent: want every one", res.Served, sent)
		}
		if !drain && res.Served != sent-res.InFlightAtEnd {
			t.Errorf("no drain: served %d, sent %d, %d cut at the end: want sent less the cut", res.Served, sent, res.InFlightAtEnd)
		}
		if res.Served <= res.Requests {
			t.Errorf("drain %v: served %d, window %d: the warm-up's answers are served too", drain, res.Served, res.Requests)
		}
	}
}

// A run's progress as its status line says it.
func TestProgressLine(t *testing.T) {
	for _, c := range []struct {
		p    Progress
		want string
	}{
		{Progress{Elapsed: 1500 * time.Millisecond, Warmup: true, Requests: 3}, "warming up 2s  3 requests  0 errors"},
		{Progress{Trial: 2, Trials: 3, Elapsed: 4 * time.Second, Total: 10 * time.Second, Requests: 812, Errors: 1},
			"trial 2/3 measuring 4s/10s  812 requests  1 errors"},
	} {
		if got := c.p.Line(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.p, got, c.want)
		}
	}
}
