package k6

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/phptune/phptune/internal/load"
)

// fakeOutput writes k6's JSON lines for n requests of the measured scenario at latencies ms(i), plus warm-up
// points, a log line, a point of another metric and the given extra lines.
func fakeOutput(t *testing.T, dir, name string, n int, ms func(i int) float64, extra ...string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("time=\"2026-11-24T08:00:00Z\" level=info msg=\"a k6 log line\"\n")
	b.WriteString(`{"type":"Metric","data":{"name":"http_req_duration","type":"trend"},"metric":"http_req_duration"}` + "\n")
	t0 := time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)
	point := func(metric string, at time.Time, v float64, tags string) {
		fmt.Fprintf(&b, `{"metric":%q,"type":"Point","data":{"time":%q,"value":%g,"tags":{%s}}}`+"\n", metric, at.Format(time.RFC3339Nano), v, tags)
	}
	point("http_req_duration", t0, 999, `"phase":"warmup","status":"200"`)
	for i := 0; i < n; i++ {
		at := t0.Add(time.Second + time.Duration(i)*time.Millisecond)
		point("http_req_duration", at, ms(i), `"phase":"measure","status":"200"`)
		point("http_req_waiting", at, ms(i), `"phase":"measure","status":"200"`)
		point("data_received", at, 100, `"phase":"measure"`)
	}
	point("vus", t0, 4, "")
	for _, e := range extra {
		b.WriteString(e + "\n")
	}
	p := filepath.Join(dir, name)
	data := []byte(b.String())
	if strings.HasSuffix(name, ".gz") {
		var z bytes.Buffer
		w := gzip.NewWriter(&z)
		w.Write(data)
		w.Close()
		data = z.Bytes()
	}
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func ingestOptions() *load.Options {
	return &load.Options{Target: load.Target{Raw: "k6", Protocol: load.HTTP}, Timeout: 30 * time.Second, Connections: 1, Duration: time.Second}
}

// Two instances, one gzipped: counts add up, warm-up and log lines are left out, and the percentiles are those
// of one histogram of both instances' requests (not an average of theirs).
func TestIngestMergesInstances(t *testing.T) {
	dir := t.TempDir()
	fail := `{"metric":"http_req_duration","type":"Point","data":{"time":"2026-11-24T08:00:01.5Z","value":300,"tags":{"phase":"measure","status":"0","error_code":"1050"}}}`
	refused := `{"metric":"http_req_duration","type":"Point","data":{"time":"2026-11-24T08:00:01.5Z","value":1,"tags":{"phase":"measure","status":"0","error_code":"1212"}}}`
	five := `{"metric":"http_req_duration","type":"Point","data":{"time":"2026-11-24T08:00:01.5Z","value":2,"tags":{"phase":"measure","status":"502"}}}`
	body := `{"metric":"` + BodyMetric + `","type":"Point","data":{"time":"2026-11-24T08:00:01.5Z","value":1,"tags":{"phase":"measure"}}}`
	dropped := `{"metric":"dropped_iterations","type":"Point","data":{"time":"2026-11-24T08:00:01.5Z","value":1,"tags":{"phase":"measure"}}}`
	a := fakeOutput(t, dir, "a.json", 1000, func(i int) float64 { return 1 + float64(i%10)*0.1 }, fail, refused, five)
	b := fakeOutput(t, dir, "b.json.gz", 500, func(i int) float64 { return 50 }, body, dropped)
	res, outs, err := Ingest([]string{a, b}, ingestOptions(), "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 1503 || outs[0].Requests != 1003 || outs[1].Requests != 500 {
		t.Fatalf("requests %d (%d + %d), want 1503 (1003 + 500)", res.Requests, outs[0].Requests, outs[1].Requests)
	}
	want := map[string]int64{load.ClassTimeout: 1, load.ClassConnect: 1, load.Class502: 1, load.ClassBody: 1}
	for c, n := range want {
		if res.ErrorsByClass[c] != n {
			t.Errorf("class %s: %d, want %d (%v)", c, res.ErrorsByClass[c], n, res.ErrorsByClass)
		}
	}
	if res.Errors != 4 || res.Unsent != 1 || res.Bytes != 1500*100 || res.Connections != 8 {
		t.Errorf("errors %d unsent %d bytes %d connections %d", res.Errors, res.Unsent, res.Bytes, res.Connections)
	}
	if outs[0].Other != 1 {
		t.Errorf("other lines %d, want the log line", outs[0].Other)
	}
	// The merged histogram: a third of the requests at 50 ms puts p90 at 50 ms, which neither instance's own
	// p90 nor their average gives.
	h := hdrhistogram.New(1, 60e6, 3)
	for i := 0; i < 1000; i++ {
		h.RecordValue(int64((1 + float64(i%10)*0.1) * 1000))
	}
	h.RecordValue(300000)
	h.RecordValue(2000)
	for i := 0; i < 500; i++ {
		h.RecordValue(50000)
	}
	if got, w := res.Latency.P90, float64(h.ValueAtQuantile(90)); got != w || got < 49000 {
		t.Errorf("p90 %v, want the merged histogram's %v", got, w)
	}
	if res.Latency.Max < 299000 {
		t.Errorf("max %v: the timed-out request is recorded at its timeout", res.Latency.Max)
	}
	// The window: the span of the measured requests, not the warm-up's.
	if res.DurationS < 0.99 || res.DurationS > 1.1 {
		t.Errorf("window %.3f s, want about the 1 s of measured requests", res.DurationS)
	}
}

func TestIngestSaysWhatIsMissing(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.json")
	os.WriteFile(empty, []byte("not k6 output\n"), 0o600)
	if _, _, err := Ingest([]string{empty}, ingestOptions(), ""); err == nil || !strings.Contains(err.Error(), "no request points") {
		t.Errorf("empty: %v", err)
	}
	if _, _, err := Ingest([]string{filepath.Join(dir, "missing.json")}, ingestOptions(), ""); err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Errorf("missing: %v", err)
	}
}

func TestScript(t *testing.T) {
	tg, _ := load.ParseTarget("http://127.0.0.1:8080/")
	o := &load.Options{Target: tg, Connections: 4, Duration: 2 * time.Second, Warmup: time.Second, Timeout: 5 * time.Second,
		Request: load.Request{Method: "GET", KeepAlive: true},
		Mix: []load.MixItem{{URI: "/a", Weight: 3, ExpectBody: regexp.MustCompile(`(?i)hello`)},
			{URI: "/login", Weight: 1, Request: &load.Request{Method: "POST", Body: []byte("u=x"), Headers: [][2]string{{"Cookie", "s=1"}}}}}}
	s, err := Script(o)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"url":"http://127.0.0.1:8080/a"`, `"expect":"hello","flags":"i"`, `"method":"POST"`, `"Cookie":"s=1"`,
		`"body":"dT14"`, `const seq = [0,0,1,0]`, `"executor":"constant-vus"`, `"duration":"3000ms"`, `Date.now() - exec.scenario.startTime < 1000`, `timeout: '5000ms'`} {
		if !strings.Contains(s, want) {
			t.Errorf("script lacks %s:\n%s", want, s)
		}
	}
	o.Rate, o.Warmup = 12.5, 0
	if s, _ = Script(o); !strings.Contains(s, `"rate":12500,"timeUnit":"1000s"`) {
		t.Errorf("open model: %s", s)
	}
	o.Rate, o.Requests, o.Warmup = 0, 100, 300*time.Millisecond
	if s, _ = Script(o); !strings.Contains(s, `"warmup":{"duration":"1000ms"`) || !strings.Contains(s, `"startTime":"1000ms"`) || !strings.Contains(s, `"iterations":100`) {
		t.Errorf("-n: a warm-up scenario of a second, then the requests: %s", s)
	}
	o.Requests, o.Duration = 0, 500*time.Millisecond
	if _, err := Script(o); err == nil || !strings.Contains(err.Error(), "a second at least") {
		t.Errorf("a test under a second: %v", err)
	}
	fc, _ := load.ParseTarget("fcgi://127.0.0.1:9000/srv/index.php")
	o.Target = fc
	if _, err := Script(o); err == nil || !strings.Contains(err.Error(), "k6 speaks HTTP") {
		t.Errorf("FastCGI: %v", err)
	}
}
