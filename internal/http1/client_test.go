package http1

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// countingServer is an httptest server that counts connections it accepted
// and closed.
type countingServer struct {
	*httptest.Server
	opened, closed atomic.Int64
}

func newCountingServer(t *testing.T, h http.HandlerFunc, idle time.Duration) *countingServer {
	t.Helper()
	s := &countingServer{Server: httptest.NewUnstartedServer(h)}
	s.Config.IdleTimeout = idle
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		switch st {
		case http.StateNew:
			s.opened.Add(1)
		case http.StateClosed, http.StateHijacked:
			s.closed.Add(1)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

func (s *countingServer) addr() string { return s.Listener.Addr().String() }

func soon() time.Time { return time.Now().Add(10 * time.Second) }

func TestClientKeepAliveReuse(t *testing.T) {
	srv := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello "+r.URL.Path)
	}, 0)
	c := NewClient("tcp", srv.addr(), time.Second)
	defer c.Close()
	req := NewRequest("GET", "example.test", "/x", nil, nil, true)
	resp := Response{KeepBody: true}
	for i := range 200 {
		if err := c.Do(context.Background(), req, &resp, soon()); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if resp.Status != 200 || string(resp.Body) != "hello /x" || resp.Close {
			t.Fatalf("request %d: %d %q close=%v", i, resp.Status, resp.Body, resp.Close)
		}
	}
	if n := srv.opened.Load(); n != 1 {
		t.Errorf("server saw %d connections, want 1", n)
	}
	if n := c.Reconnects(); n != 0 {
		t.Errorf("Reconnects = %d, want 0", n)
	}
}

func TestClientPostAndHeaders(t *testing.T) {
	srv := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		io.WriteString(w, r.Method+"|"+r.Host+"|"+r.Header.Get("X-Test")+"|"+r.UserAgent()+"|"+
			strconv.FormatInt(r.ContentLength, 10)+"|"+string(body))
	}, 0)
	c := NewClient("tcp", srv.addr(), time.Second)
	defer c.Close()
	tests := []struct {
		req  *Request
		want string
	}{
		{NewRequest("POST", "example.test", "/p", nil, []byte("payload"), true), "POST|example.test|||7|payload"},
		{NewRequest("PUT", "example.test", "/p", nil, []byte{}, true), "PUT|example.test|||0|"},
		{NewRequest("GET", "example.test", "/", [][2]string{{"X-Test", "abc"}, {"Host", "other.test"}, {"User-Agent", "phptune"}}, nil, true),
			"GET|other.test|abc|phptune|0|"},
	}
	resp := Response{KeepBody: true}
	for _, tt := range tests {
		if err := c.Do(context.Background(), tt.req, &resp, soon()); err != nil {
			t.Fatalf("%s: %v", tt.req.Method(), err)
		}
		if resp.Status != 200 || string(resp.Body) != tt.want {
			t.Errorf("%s: got %d %q, want %q", tt.req.Method(), resp.Status, resp.Body, tt.want)
		}
	}
	if n := srv.opened.Load(); n != 1 {
		t.Errorf("server saw %d connections, want 1", n)
	}
}

func TestClientConnectionClose(t *testing.T) {
	srv := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "bye")
	}, 0)
	c := NewClient("tcp", srv.addr(), time.Second)
	defer c.Close()
	req := NewRequest("GET", "example.test", "/", nil, nil, false)
	resp := Response{KeepBody: true}
	const n = 10
	for i := range n {
		if err := c.Do(context.Background(), req, &resp, soon()); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if resp.Status != 200 || string(resp.Body) != "bye" || !resp.Close {
			t.Fatalf("request %d: %d %q close=%v", i, resp.Status, resp.Body, resp.Close)
		}
	}
	if got := srv.opened.Load(); got != n {
		t.Errorf("server saw %d connections, want %d", got, n)
	}
	if got := c.Reconnects(); got != n-1 {
		t.Errorf("Reconnects = %d, want %d", got, n-1)
	}
}

// TestClientRetryAfterIdleTimeout lets net/http close the idle connection
// and expects the next request to succeed on a new one.
func TestClientRetryAfterIdleTimeout(t *testing.T) {
	srv := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	}, 50*time.Millisecond)
	c := NewClient("tcp", srv.addr(), time.Second)
	defer c.Close()
	req := NewRequest("GET", "example.test", "/", nil, nil, true)
	var resp Response
	for i := range 3 {
		if err := c.Do(context.Background(), req, &resp, soon()); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if resp.Status != 200 || resp.Close {
			t.Fatalf("request %d: %d close=%v", i, resp.Status, resp.Close)
		}
		// Wait until the server has closed the idle connection.
		for end := time.Now().Add(5 * time.Second); srv.closed.Load() < int64(i+1); {
			if time.Now().After(end) {
				t.Fatal("server did not close the idle connection")
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	if got := c.Reconnects(); got != 2 {
		t.Errorf("Reconnects = %d, want 2", got)
	}
}

const okResponse = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"

// TestClientRetryServerClosesSilently uses a server that closes after each
// response without announcing it.
func TestClientRetryServerClosesSilently(t *testing.T) {
	srv := newRawServer(t, func(_ int64, c net.Conn) {
		buf := make([]byte, 4096)
		if _, err := readHead(c, buf, 0); err != nil {
			return
		}
		io.WriteString(c, okResponse)
	})
	c := NewClient("tcp", srv.addr, time.Second)
	defer c.Close()
	req := NewRequest("GET", "example.test", "/", nil, nil, true)
	resp := Response{KeepBody: true}
	const n = 20
	for i := range n {
		if err := c.Do(context.Background(), req, &resp, soon()); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if resp.Status != 200 || string(resp.Body) != "ok" {
			t.Fatalf("request %d: %d %q", i, resp.Status, resp.Body)
		}
	}
	if got := c.Reconnects(); got != n-1 {
		t.Errorf("Reconnects = %d, want %d", got, n-1)
	}
	if got := srv.accepted.Load(); got != n {
		t.Errorf("server accepted %d connections, want %d", got, n)
	}
}

// TestClientNoRetry covers failures that must be returned as they are.
func TestClientNoRetry(t *testing.T) {
	t.Run("fresh connection", func(t *testing.T) {
		srv := newRawServer(t, func(_ int64, c net.Conn) {})
		c := NewClient("tcp", srv.addr, time.Second)
		defer c.Close()
		err := c.Do(context.Background(), NewRequest("GET", "h", "/", nil, nil, true), &Response{}, soon())
		if !errors.Is(err, io.EOF) && !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("err = %v, want EOF or connection reset", err)
		}
		if got := srv.accepted.Load(); got != 1 {
			t.Errorf("server accepted %d connections, want 1", got)
		}
	})
	t.Run("after response bytes", func(t *testing.T) {
		srv := newRawServer(t, func(_ int64, c net.Conn) {
			buf := make([]byte, 4096)
			have, err := readHead(c, buf, 0)
			if err != nil {
				return
			}
			io.WriteString(c, okResponse)
			if _, err := readHead(c, buf, have); err != nil {
				return
			}
			io.WriteString(c, "HTTP/1.1 200 OK\r\nCont")
		})
		c := NewClient("tcp", srv.addr, time.Second)
		defer c.Close()
		req := NewRequest("GET", "h", "/", nil, nil, true)
		var resp Response
		if err := c.Do(context.Background(), req, &resp, soon()); err != nil {
			t.Fatal(err)
		}
		if err := c.Do(context.Background(), req, &resp, soon()); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("err = %v, want unexpected EOF", err)
		}
		if got := srv.accepted.Load(); got != 1 {
			t.Errorf("server accepted %d connections, want 1", got)
		}
	})
	t.Run("only once", func(t *testing.T) {
		// The first connection serves one response then closes; later ones
		// close at once, so the single retry fails and is reported.
		srv := newRawServer(t, func(n int64, c net.Conn) {
			if n > 1 {
				return
			}
			buf := make([]byte, 4096)
			if _, err := readHead(c, buf, 0); err != nil {
				return
			}
			io.WriteString(c, okResponse)
		})
		c := NewClient("tcp", srv.addr, time.Second)
		defer c.Close()
		req := NewRequest("GET", "h", "/", nil, nil, true)
		var resp Response
		if err := c.Do(context.Background(), req, &resp, soon()); err != nil {
			t.Fatal(err)
		}
		if err := c.Do(context.Background(), req, &resp, soon()); err == nil {
			t.Fatal("second request succeeded against a closing server")
		}
		if got := srv.accepted.Load(); got != 2 {
			t.Errorf("server accepted %d connections, want 2", got)
		}
	})
}

func TestClientConnectRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c := NewClient("tcp", addr, time.Second)
	defer c.Close()
	err = c.Do(context.Background(), NewRequest("GET", "h", "/", nil, nil, true), &Response{}, soon())
	if !errors.Is(err, ErrConnect) || !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("err = %v, want ErrConnect wrapping ECONNREFUSED", err)
	}
	if _, err := Dial(context.Background(), "tcp", addr); !errors.Is(err, ErrConnect) {
		t.Fatalf("Dial err = %v, want ErrConnect", err)
	}
}

// silentServer accepts connections and reads requests without answering.
func silentServer(t *testing.T) *rawServer {
	return newRawServer(t, func(_ int64, c net.Conn) { io.Copy(io.Discard, c) })
}

func TestClientDeadline(t *testing.T) {
	srv := silentServer(t)
	c := NewClient("tcp", srv.addr, time.Second)
	defer c.Close()
	const timeout = 200 * time.Millisecond
	start := time.Now()
	err := c.Do(context.Background(), NewRequest("GET", "h", "/", nil, nil, true), &Response{}, start.Add(timeout))
	elapsed := time.Since(start)
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("err = %v, want os.ErrDeadlineExceeded", err)
	}
	if elapsed < timeout || elapsed > timeout+500*time.Millisecond {
		t.Fatalf("returned after %v, want about %v", elapsed, timeout)
	}
}

func TestClientContextCancel(t *testing.T) {
	srv := silentServer(t)
	c := NewClient("tcp", srv.addr, time.Second)
	defer c.Close()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	err := c.Do(ctx, NewRequest("GET", "h", "/", nil, nil, true), &Response{}, time.Time{})
	if !errors.Is(err, context.Canceled) || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("err = %v, want only context.Canceled", err)
	}
	if elapsed := time.Since(start); elapsed > 2*time.Second {
		t.Fatalf("cancellation took %v", elapsed)
	}
	// Later calls with the cancelled context fail at once; a new context works
	// with a connection untouched by the old one's cancellation.
	if err := c.Do(ctx, NewRequest("GET", "h", "/", nil, nil, true), &Response{}, time.Time{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("after cancel: err = %v", err)
	}
	err = c.Do(context.Background(), NewRequest("GET", "h", "/", nil, nil, true), &Response{}, time.Now().Add(50*time.Millisecond))
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("new context: err = %v, want deadline", err)
	}
}

func TestClientClosed(t *testing.T) {
	srv := newRawServer(t, func(_ int64, c net.Conn) { serveFixed(c, []byte(okResponse)) })
	c := NewClient("tcp", srv.addr, time.Second)
	req := NewRequest("GET", "h", "/", nil, nil, true)
	if err := c.Do(context.Background(), req, &Response{}, soon()); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Do(context.Background(), req, &Response{}, soon()); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Do after Close: err = %v, want net.ErrClosed", err)
	}
}
