package http1

import (
	"context"
	"net"
	"testing"
	"time"
)

var allocResponses = map[string]string{
	"content-length": "HTTP/1.1 200 OK\r\nServer: test\r\nContent-Type: text/html\r\nContent-Length: 13\r\n\r\nHello, world!",
	"chunked":        chunkedHead + chunkedBody + chunkedTrail,
	"continue":       continueHead + "HTTP/1.1 204 No Content\r\n\r\n",
}

// TestClientDoZeroAllocs proves the hot path does not allocate. The peer is
// in-process and answers with pre-built bytes from a fixed buffer, so every
// malloc counted by AllocsPerRun would be the client's.
func TestClientDoZeroAllocs(t *testing.T) {
	for name, raw := range allocResponses {
		for _, keep := range []bool{false, true} {
			srv := newRawServer(t, func(_ int64, c net.Conn) { serveFixed(c, []byte(raw)) })
			c := NewClient("tcp", srv.addr, time.Second)
			ctx, cancel := context.WithCancel(context.Background())
			req := NewRequest("GET", "example.test", "/", [][2]string{{"User-Agent", "phptune"}}, nil, true)
			resp := Response{KeepBody: keep}
			var err error
			do := func() {
				if e := c.Do(ctx, req, &resp, time.Now().Add(10*time.Second)); e != nil && err == nil {
					err = e
				}
			}
			for range 10 {
				do()
			}
			allocs := testing.AllocsPerRun(1000, do)
			cancel()
			c.Close()
			if err != nil {
				t.Fatalf("%s keep=%v: %v", name, keep, err)
			}
			if allocs != 0 {
				t.Errorf("%s keep=%v: %v allocs per request, want 0", name, keep, allocs)
			}
			if c.Reconnects() != 0 {
				t.Errorf("%s keep=%v: connection was not reused", name, keep)
			}
		}
	}
}

func BenchmarkClientDo(b *testing.B) {
	srv := newRawServer(b, func(_ int64, c net.Conn) { serveFixed(c, []byte(allocResponses["content-length"])) })
	c := NewClient("tcp", srv.addr, time.Second)
	defer c.Close()
	req := NewRequest("GET", "example.test", "/", nil, nil, true)
	var resp Response
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := c.Do(ctx, req, &resp, time.Now().Add(10*time.Second)); err != nil {
			b.Fatal(err)
		}
	}
}
