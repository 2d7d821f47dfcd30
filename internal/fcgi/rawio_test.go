package fcgi

import (
	"bytes"
	"context"
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
	body := pattern(16 << 20)
	req := NewRequest(testParams("/upload.php", "", nil, len(body)), body)
	for _, network := range networks {
		t.Run(network, func(t *testing.T) {
			addr, _ := startRaw(t, network, func(c net.Conn) {
				scratch := make([]byte, 1<<17)
				for {
					time.Sleep(100 * time.Millisecond)
					var stdin []byte
					if readRequest(c, scratch, nil, &stdin) != nil {
						return
					}
					ok := strconv.FormatBool(bytes.Equal(stdin, body))
					if _, err := c.Write(reply([]byte("Content-Type: text/plain\r\n\r\n"+ok), nil, 8192, 0, 0)); err != nil {
						return
					}
				}
			})
			c := dialT(t, network, addr)
			resp := Response{KeepBody: true}
			for i := range 2 {
				if err := c.Do(req, &resp, time.Now().Add(10*time.Second)); err != nil {
					t.Fatalf("request %d: %v", i, err)
				}
				if string(resp.Body) != "true" {
					t.Fatalf("request %d: the server did not receive the body intact", i)
				}
			}
		})
	}
}

// TestNoLostWakeups runs many short exchanges on several processors: a
// response whose readiness were missed by the wait in sendWait would end in
// a timeout.
func TestNoLostWakeups(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	out := reply([]byte("Content-Type: text/plain\r\n\r\nok"), nil, 8192, 0, 0)
	n := 3000
	if testing.Short() {
		n = 300
	}
	for _, network := range networks {
		t.Run(network, func(t *testing.T) {
			addr := startFixedResponder(t, network, out)
			req := NewRequest(testParams("/index.php", "", nil, 0), nil)
			var wg sync.WaitGroup
			for range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					cl := NewClient(network, addr, time.Second)
					defer cl.Close()
					var resp Response
					for i := range n {
						if err := cl.Do(context.Background(), req, &resp, time.Now().Add(5*time.Second)); err != nil {
							t.Errorf("request %d: %v", i, err)
							return
						}
					}
				}()
			}
			wg.Wait()
		})
	}
}
