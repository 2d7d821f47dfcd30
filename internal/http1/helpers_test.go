package http1

import (
	"bytes"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// rawServer is a TCP listener whose connections are served by handle, for
// behaviour net/http cannot produce (or that must not allocate). accepted
// counts connections. Everything is torn down when the test ends.
type rawServer struct {
	addr     string
	accepted atomic.Int64
}

func newRawServer(t testing.TB, handle func(n int64, c net.Conn)) *rawServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	s := &rawServer{addr: ln.Addr().String()}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns []net.Conn
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n := s.accepted.Add(1)
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				handle(n, c)
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return s
}

var headEnd = []byte("\r\n\r\n")

// readHead reads one body-less request head from c into buf, returning how
// many bytes of buf are still unconsumed (the start of a next request).
// It does not allocate, so zero-allocation responders can use it.
func readHead(c net.Conn, buf []byte, have int) (int, error) {
	for {
		if i := bytes.Index(buf[:have], headEnd); i >= 0 {
			return copy(buf, buf[i+len(headEnd):have]), nil
		}
		if have == len(buf) {
			return 0, errors.New("request head too large")
		}
		n, err := c.Read(buf[have:])
		have += n
		if err != nil && n == 0 {
			return 0, err
		}
	}
}

// serveFixed answers every request on c with resp until the peer goes away.
// It allocates nothing per request.
func serveFixed(c net.Conn, resp []byte) {
	buf := make([]byte, 16<<10)
	have := 0
	for {
		var err error
		if have, err = readHead(c, buf, have); err != nil {
			return
		}
		if _, err := c.Write(resp); err != nil {
			return
		}
	}
}

// pipeConn returns a Conn over net.Pipe whose other end runs serve, torn
// down when the test ends. Pipe writes are delivered to reads without
// coalescing, which makes the split points of a response exact.
func pipeConn(t testing.TB, serve func(net.Conn)) *Conn {
	t.Helper()
	c, stop := startPipe(serve)
	t.Cleanup(stop)
	return c
}

// startPipe is pipeConn for loops: stop closes both ends and waits for serve.
func startPipe(serve func(net.Conn)) (*Conn, func()) {
	client, server := net.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer server.Close()
		serve(server)
	}()
	return NewConn(client), func() {
		client.Close()
		<-done
	}
}
