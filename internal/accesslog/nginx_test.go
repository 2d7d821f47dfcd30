package accesslog

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/loopback"
)

// timedFormat is nginx's combined format with the request's and php-fpm's times appended, as operators log
// them; plainTimed is combined with $request_time alone, which the reader recognises unaided.
const (
	timedFormat = `$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" ` +
		`"$http_user_agent" $request_time $upstream_response_time`
	plainTimed = `$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" ` +
		`"$http_user_agent" $request_time`
)

// TestLoadOfARealNginxLog: a real nginx, proxying to a backend that takes 20 ms a request, writes both formats
// while 8 connections load it for about a second; the load read from each log is the one its lines show (the
// requests of each stamped second, the time logged in it) and Little's law's concurrency is within the 8
// connections in flight.
func TestLoadOfARealNginxLog(t *testing.T) {
	bin, err := exec.LookPath("nginx")
	if err != nil {
		if _, err = os.Stat("/usr/sbin/nginx"); err != nil {
			t.Fatal("nginx not found: install Debian's nginx-light (make deps does)")
		}
		bin = "/usr/sbin/nginx"
	}
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(20 * time.Millisecond)
		io.WriteString(w, "ok")
	}))
	defer backend.Close()
	dir := t.TempDir()
	port, err := loopback.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	timed, plain := filepath.Join(dir, "timed.log"), filepath.Join(dir, "plain.log")
	conf := fmt.Sprintf(`daemon off; worker_processes 1; pid %[1]s/nginx.pid; error_log %[1]s/error.log;
events { worker_connections 64; }
http {
    log_format timed '%[2]s';
    log_format plain '%[3]s';
    access_log %[4]s timed;
    access_log %[5]s plain;
    client_body_temp_path %[1]s/body; proxy_temp_path %[1]s/proxy; fastcgi_temp_path %[1]s/fastcgi;
    uwsgi_temp_path %[1]s/uwsgi; scgi_temp_path %[1]s/scgi;
    upstream app { server %[6]s; keepalive 8; }
    server {
        listen 127.0.0.1:%[7]d;
        location / { proxy_pass http://app; proxy_http_version 1.1; proxy_set_header Connection ""; }
    }
}
`, dir, timedFormat, plainTimed, timed, plain, strings.TrimPrefix(backend.URL, "http://"), port)
	confPath := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "-p", dir, "-e", filepath.Join(dir, "error.log"), "-c", confPath)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); cmd.Wait() }()
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if time.Since(start) > 10*time.Second {
			errs, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Fatalf("nginx did not listen on %s within 10 s: %s", addr, errs)
		}
	}
	url := "http://" + addr + "/page?id="
	sent := loadFor(t, url, 8, 1200*time.Millisecond)
	cmd.Process.Signal(os.Interrupt) // nginx's fast shutdown: the logs are written as each request ends
	cmd.Wait()
	for _, c := range []struct {
		path, format, from string
	}{{timed, timedFormat, ServiceUpstream}, {plain, "", ServiceRequest}} {
		m, err := Read([]string{c.path}, Options{Format: c.format})
		if err != nil {
			t.Fatal(err)
		}
		l := m.Load
		peak, conc := loggedLoad(t, c.path)
		t.Logf("%s: %d requests, peak %v req/s, concurrency %.3f (%s times)", filepath.Base(c.path), l.Requests, l.PeakRPS, l.PeakConcurrency, l.ServiceFrom)
		if l.Requests != sent || l.Timed != sent || l.ServiceTimed != sent || l.ServiceFrom != c.from {
			t.Errorf("%s: %d requests, %d stamped, %d with %q times; want all %d sent, with %q times",
				c.path, l.Requests, l.Timed, l.ServiceTimed, l.ServiceFrom, sent, c.from)
		}
		if l.PeakRPS != float64(peak) || math.Abs(l.PeakConcurrency-conc) > 1e-6 {
			t.Errorf("%s: peak %v req/s, concurrency %v; the lines show %d and %v", c.path, l.PeakRPS, l.PeakConcurrency, peak, conc)
		}
		if c.from == ServiceUpstream && (l.PeakConcurrency > 8.05 || l.PeakConcurrency < 1) {
			t.Errorf("%s: concurrency %v, want within the 8 connections in flight", c.path, l.PeakConcurrency)
		}
	}
}

// loadFor requests url from conns connections for d, each waiting for its answer; it returns the requests
// answered.
func loadFor(t *testing.T, url string, conns int, d time.Duration) int {
	t.Helper()
	end := time.Now().Add(d)
	var mu sync.Mutex
	var n int
	var wg sync.WaitGroup
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conns}, Timeout: 5 * time.Second}
	for w := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(end); i++ {
				resp, err := client.Get(url + strconv.Itoa(w*10000+i))
				if err != nil {
					t.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				mu.Lock()
				n++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return n
}

// stampRE is $time_local's second, the line's time stamp.
var stampRE = regexp.MustCompile(`\[(\d\d/\w\w\w/\d{4}:\d\d:\d\d:\d\d [+-]\d{4})\]`)

// loggedLoad is the oracle, from the lines as nginx wrote them: the most requests stamped in one second, and
// the most time logged in one (each line's last field, in seconds): every request takes 20 ms, well within the
// half second before the middle of its stamp's second, so its time falls in that second.
func loggedLoad(t *testing.T, path string) (peak int, conc float64) {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	count, time := map[string]int{}, map[string]float64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := stampRE.FindStringSubmatch(sc.Text())
		fields := strings.Fields(sc.Text())
		v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if m == nil || err != nil || v > 0.5 {
			t.Fatalf("%s: line %q: no stamp or time, or a request longer than half a second", path, sc.Text())
		}
		count[m[1]]++
		time[m[1]] += v
	}
	for s, n := range count {
		peak, conc = max(peak, n), max(conc, time[s])
	}
	return peak, conc
}
