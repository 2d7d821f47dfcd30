package load

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// rawFCGIServer answers every FastCGI request with the same records and allocates nothing per request, so the
// process's allocation count measures the generator alone (net/http/fcgi allocates per request on its side).
func rawFCGIServer(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	stdout := "Status: 200 OK\r\nContent-Type: text/plain\r\n\r\nok"
	reply := append([]byte{1, 6, 0, 1, 0, byte(len(stdout)), 0, 0}, stdout...)
	reply = append(reply, 1, 6, 0, 1, 0, 0, 0, 0) // the end of stdout
	reply = append(reply, 1, 3, 0, 1, 0, 8, 0, 0) // END_REQUEST
	reply = append(reply, 0, 0, 0, 0, 0, 0, 0, 0) // app status 0, request complete
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go serveFCGI(c, reply)
		}
	}()
	return l.Addr().String()
}

// serveFCGI reads records and writes reply after each request's empty STDIN record.
func serveFCGI(c net.Conn, reply []byte) {
	defer c.Close()
	var hdr [8]byte
	scratch := make([]byte, 1<<16+256)
	for {
		if _, err := io.ReadFull(c, hdr[:]); err != nil {
			return
		}
		n := int(hdr[4])<<8 | int(hdr[5])
		if _, err := io.ReadFull(c, scratch[:n+int(hdr[6])]); err != nil {
			return
		}
		if hdr[1] == 5 && n == 0 {
			if _, err := c.Write(reply); err != nil {
				return
			}
		}
	}
}

// requestStep is one connection of the generator against an in-process responder that answers at once:
// step sends and counts one request as the run's loop does, in the closed model over a window or in the open
// model (a schedule always due, so that no step sleeps).
func requestStep(t testing.TB, protocol, model string) (step func(), w *worker) {
	raw := "http://" + rawHTTPServer(t) + "/"
	if protocol == FastCGI {
		raw = "fcgi://" + rawFCGIServer(t) + "/srv/index.php"
	}
	tg, err := ParseTarget(raw)
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Target: tg, Request: Request{KeepAlive: true}, Connections: 1, Duration: time.Hour, Timeout: 5 * time.Second}
	if model == Open {
		o.Rate = 1e9
	}
	if err := o.check(); err != nil {
		t.Fatal(err)
	}
	c := newClientFactory(&o, false, time.Second)()
	t.Cleanup(func() { c.close() })
	w = &worker{hist: hdrhistogram.New(1, o.highest(), 3), seq: MixSequence(nil)}
	accept, cnt, ctx, now := acceptSet(nil), &counters{}, context.Background(), time.Now()
	if model == Open {
		w.histUncorr = hdrhistogram.New(1, o.highest(), 3)
		s := &schedule{t0: now, perReq: 1, limit: 1 << 62, hardEnd: now.Add(time.Hour), conns: 1}
		l := &openLoop{w: w, c: c, o: &o, accept: accept, s: s, cnt: cnt, timer: time.NewTimer(time.Hour)}
		return func() { l.step(ctx) }, w
	}
	l := &closedLoop{w: w, c: c, o: &o, accept: accept, measureStart: now, end: now.Add(time.Hour), cnt: cnt}
	return func() { l.step(ctx) }, w
}

// TestRequestPathAllocatesNothing: a request over a kept connection, with the generator's bookkeeping (clock,
// deadline, histogram, counters), allocates nothing, over HTTP and FastCGI, in both models.
func TestRequestPathAllocatesNothing(t *testing.T) {
	for _, protocol := range []string{HTTP, FastCGI} {
		for _, model := range []string{Closed, Open} {
			t.Run(protocol+"/"+model, func(t *testing.T) {
				step, w := requestStep(t, protocol, model)
				for range 10 {
					step() // dial, size the buffers
				}
				if n := testing.AllocsPerRun(2000, step); n != 0 {
					t.Errorf("%v allocations a request, want 0", n)
				}
				if w.requests < 2000 || w.errors != 0 || w.hist.TotalCount() != w.requests {
					t.Errorf("requests %d, errors %d (%v), in the histogram %d", w.requests, w.errors, w.samples, w.hist.TotalCount())
				}
			})
		}
	}
}

// BenchmarkRequest is the generator's cost a request over a kept connection, the responder's included:
// go test -run '^$' -bench Request -benchmem ./internal/load (0 allocs/op).
func BenchmarkRequest(b *testing.B) {
	for _, protocol := range []string{HTTP, FastCGI} {
		for _, model := range []string{Closed, Open} {
			b.Run(protocol+"/"+model, func(b *testing.B) {
				step, w := requestStep(b, protocol, model)
				step()
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					step()
				}
				b.StopTimer()
				if w.errors != 0 {
					b.Fatalf("%d errors: %v", w.errors, w.samples)
				}
			})
		}
	}
}
