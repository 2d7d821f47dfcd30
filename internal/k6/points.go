package k6

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/phptune/phptune/internal/load"
)

// point is a line of k6's JSON output (--out json): a metric sample.
type point struct {
	Type   string `json:"type"`
	Metric string `json:"metric"`
	Data   struct {
		Time  time.Time         `json:"time"`
		Value float64           `json:"value"`
		Tags  map[string]string `json:"tags"`
	} `json:"data"`
}

// Output is what one k6 instance's output held.
type Output struct {
	Name      string
	Requests  int64
	First     time.Time // the first measured request's start (the instance's clock)
	Last      time.Time // the last measured request's end
	FirstSeen time.Time // when phptune read its first measured point (this machine's clock)
	MaxVUs    int
	Other     int64           // lines that are not k6 points: its log, a banner
	Scenarios map[string]bool // the scenarios seen
	Phased    bool            // its points carry phptune's phase tag
}

// Window is the span of the instance's measured requests.
func (o *Output) Window() time.Duration {
	if o.Last.Before(o.First) {
		return 0
	}
	return o.Last.Sub(o.First)
}

// reader counts one instance's measured points into a recorder: a point tagged with a phase (phptune's scripts)
// counts in the measured phase; a point without, when it is of scenario ("" for every scenario).
type reader struct {
	rec      *load.Recorder
	scenario string
	out      *Output
	live     *atomic.Int64 // requests so far, for progress; may be nil
	dropped  []time.Time   // dropped iterations, counted from the first measured request on
}

// Read reads k6's JSON output (plain or gzip) from r. Lines that are not points are counted, never an error:
// k6's log and banner may share the stream.
func (rd *reader) Read(r io.Reader) error {
	br := bufio.NewReaderSize(r, 1<<16)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return fmt.Errorf("%s: gzip: %w", rd.out.Name, err)
		}
		defer zr.Close()
		br = bufio.NewReaderSize(zr, 1<<16)
	}
	if rd.out.Scenarios == nil {
		rd.out.Scenarios = map[string]bool{}
	}
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// A line longer than the buffer is no point of ours: skip the rest of it.
			rd.out.Other++
			for err == bufio.ErrBufferFull {
				_, err = br.ReadSlice('\n')
			}
			continue
		}
		if len(line) > 0 {
			rd.line(line)
		}
		if err == io.EOF {
			rd.finish()
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", rd.out.Name, err)
		}
	}
}

// wanted are the metrics read; every request writes a dozen other points, skipped before decoding.
var wanted = [][]byte{[]byte(`"http_req_duration"`), []byte(`"data_received"`), []byte(`"dropped_iterations"`),
	[]byte(`"` + BodyMetric + `"`), []byte(`"vus"`)}

func (rd *reader) line(line []byte) {
	if !bytes.HasPrefix(line, []byte(`{`)) || !bytes.Contains(line, []byte(`"type":"Point"`)) {
		if len(bytes.TrimSpace(line)) > 0 && !bytes.Contains(line, []byte(`"type":"Metric"`)) {
			rd.out.Other++
		}
		return
	}
	hit := false
	for _, w := range wanted {
		if bytes.Contains(line, w) {
			hit = true
			break
		}
	}
	if !hit {
		return
	}
	var p point
	if err := json.Unmarshal(line, &p); err != nil {
		rd.out.Other++
		return
	}
	if p.Metric == "vus" {
		rd.out.MaxVUs = max(rd.out.MaxVUs, int(p.Data.Value))
		return
	}
	if p.Metric == "dropped_iterations" {
		// An executor's point, without the VUs' phase: counted by time in finish.
		for range int(p.Data.Value) {
			rd.dropped = append(rd.dropped, p.Data.Time)
		}
		return
	}
	sc, phase := p.Data.Tags["scenario"], p.Data.Tags[PhaseTag]
	rd.out.Scenarios[sc] = true
	rd.out.Phased = rd.out.Phased || phase != ""
	if (phase != "" && phase != Measured) || (phase == "" && rd.scenario != "" && sc != rd.scenario) {
		return
	}
	switch p.Metric {
	case "http_req_duration":
		rd.request(&p)
	case "data_received":
		rd.rec.Bytes(int64(p.Data.Value))
	case BodyMetric:
		rd.rec.ContentMissing(int64(p.Data.Value))
	}
}

// finish counts the dropped iterations of the measured window.
func (rd *reader) finish() {
	n := int64(0)
	for _, t := range rd.dropped {
		if !rd.out.Phased || (rd.out.Requests > 0 && !t.Before(rd.out.First)) {
			n++
		}
	}
	rd.rec.Unsent(n)
}

func (rd *reader) request(p *point) {
	lat := time.Duration(p.Data.Value * float64(time.Millisecond))
	start, end := p.Data.Time.Add(-lat), p.Data.Time
	o := rd.out
	if o.Requests == 0 || start.Before(o.First) {
		o.First = start
	}
	if end.After(o.Last) {
		o.Last = end
	}
	if o.Requests == 0 {
		o.FirstSeen = time.Now()
	}
	o.Requests++
	if rd.live != nil {
		rd.live.Add(1)
	}
	status, _ := strconv.Atoi(p.Data.Tags["status"])
	if status > 0 {
		rd.rec.Response(status, 0, lat)
		return
	}
	code := p.Data.Tags["error_code"]
	rd.rec.Failure(errorClass(code), lat, "k6 error code "+code+" (https://grafana.com/docs/k6/latest/javascript-api/error-codes/)")
}

// errorClass maps k6's error codes of requests without a response to phptune's classes.
func errorClass(code string) string {
	c, _ := strconv.Atoi(code)
	switch {
	case c == 1050 || c == 1211:
		return load.ClassTimeout // request timeout, dial timeout
	case c >= 1100 && c < 1200, c == 1210, c == 1212, c == 1213:
		return load.ClassConnect // DNS, dial errors (refused, unknown)
	case c >= 1200 && c < 1300:
		return load.ClassIO // broken pipe, reset by peer
	}
	return load.ClassProtocol // TLS, HTTP/2, malformed responses, generic errors
}
