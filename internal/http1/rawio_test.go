package http1

import (
	"context"
	"io"
	"net"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"
)

// TestBigRequestBody covers a request larger than the socket buffers, sent
// to a server that starts reading late: the write from inside RawConn.Read
// stops at EAGAIN and the rest goes through the ordinary blocking Write.
func TestBigRequestBody(t *testing.T) {
	body := make([]byte, 16<<20)
	for i := range body {
		body[i] = byte(i)
	}
	req := NewRequest("POST", "h", "/", nil, body, true)
	srv := newRawServer(t, func(_ int64, c net.Conn) {
		for {
			time.Sleep(100 * time.Millisecond)
			n, err := io.CopyN(io.Discard, c, int64(req.Len()))
			if err != nil {
				return
			}
			out := "HTTP/1.1 200 OK\r\nContent-Length: " + strconv.Itoa(len(strconv.FormatInt(n, 10))) + "\r\n\r\n" + strconv.FormatInt(n, 10)
			if _, err := c.Write([]byte(out)); err != nil {
				return
			}
		}
	})
	c := NewClient("tcp", srv.addr, time.Second)
	defer c.Close()
	resp := Response{KeepBody: true}
	for i := range 2 {
		if err := c.Do(context.Background(), req, &resp, time.Now().Add(10*time.Second)); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if got := string(resp.Body); got != strconv.Itoa(req.Len()) {
			t.Fatalf("request %d: server read %s bytes, want %d", i, got, req.Len())
		}
	}
	if c.Reconnects() != 0 {
		t.Errorf("%d reconnects, want 0", c.Reconnects())
	}
}

// TestNoLostWakeups runs many short exchanges on several processors: a
// response whose readiness were missed by the wait in sendWait would end in
// a timeout.
func TestNoLostWakeups(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	srv := newRawServer(t, func(_ int64, c net.Conn) { serveFixed(c, []byte(okResponse)) })
	n := 3000
	if testing.Short() {
		n = 300
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := NewClient("tcp", srv.addr, time.Second)
			defer c.Close()
			req := NewRequest("GET", "h", "/", nil, nil, true)
			var resp Response
			for i := range n {
				if err := c.Do(context.Background(), req, &resp, time.Now().Add(5*time.Second)); err != nil {
					t.Errorf("request %d: %v", i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
}
