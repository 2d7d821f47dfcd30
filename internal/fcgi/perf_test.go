package fcgi

import (
	"context"
	"net"
	"testing"
	"time"
)

// startFixedResponder answers every request with out. Per request it
// allocates nothing, so AllocsPerRun, which counts the whole process,
// measures the client alone.
func startFixedResponder(t testing.TB, network string, out []byte) string {
	addr, _ := startRaw(t, network, func(c net.Conn) {
		scratch := make([]byte, 1<<16)
		for readRequest(c, scratch, nil, nil) == nil {
			if _, err := c.Write(out); err != nil {
				return
			}
		}
	})
	return addr
}

func TestHotPathZeroAllocs(t *testing.T) {
	stdout := append([]byte("Status: 200 OK\r\nContent-Type: text/html; charset=UTF-8\r\n\r\n"), pattern(20000)...)
	out := reply(stdout, []byte("PHP Notice: something"), 8192, 0, 0)
	body := pattern(1000)
	req := NewRequest(testParams("/index.php", "a=1", []Param{{"Content-Type", "text/plain"}}, len(body)), body)
	ctx := context.Background()

	for _, network := range networks {
		t.Run(network, func(t *testing.T) {
			addr := startFixedResponder(t, network, out)

			t.Run("Client.Do", func(t *testing.T) {
				cl := NewClient(network, addr, time.Second)
				defer cl.Close()
				for _, keep := range []bool{true, false} {
					resp := Response{KeepBody: keep}
					do := func() {
						// A fresh deadline per call, as the load generator does.
						if err := cl.Do(ctx, req, &resp, time.Now().Add(5*time.Second)); err != nil {
							t.Fatal(err)
						}
					}
					do() // grow buffers
					if n := testing.AllocsPerRun(500, do); n != 0 {
						t.Errorf("KeepBody=%v: %v allocations per request, want 0", keep, n)
					}
					if resp.BodyBytes != 20000 || resp.StderrBytes == 0 {
						t.Errorf("bad response %+v", resp)
					}
				}
			})

			t.Run("Conn.Do", func(t *testing.T) {
				c := dialT(t, network, addr)
				var resp Response
				do := func() {
					if err := c.Do(req, &resp, time.Time{}); err != nil {
						t.Fatal(err)
					}
				}
				do()
				if n := testing.AllocsPerRun(500, do); n != 0 {
					t.Errorf("%v allocations per request, want 0", n)
				}
			})
		})
	}
}

// TestQuickAckAvoidsDelayedACKStall reproduces php-fpm's pattern (Nagle on,
// a response written as an 8 KiB chunk and then the rest) on a kept TCP
// connection: without TCP_QUICKACK the second write waits for a delayed ACK
// (about 40 ms on Linux); with it, the response arrives at once.
func TestQuickAckAvoidsDelayedACKStall(t *testing.T) {
	if !quickAckSupported {
		t.Skip("TCP_QUICKACK is Linux-only")
	}
	if testing.Short() {
		t.Skip("takes about a second")
	}
	stdout := append([]byte("Content-Type: text/html\r\n\r\n"), pattern(20000)...)
	out := reply(stdout, nil, 8000, 0, 0)
	addr, _ := startRaw(t, "tcp", func(c net.Conn) {
		c.(*net.TCPConn).SetNoDelay(false) // php-fpm never sets TCP_NODELAY
		scratch := make([]byte, 1<<16)
		for readRequest(c, scratch, nil, nil) == nil {
			if _, err := c.Write(out[:8192]); err != nil {
				return
			}
			if _, err := c.Write(out[8192:]); err != nil {
				return
			}
		}
	})
	req := NewRequest(testParams("/index.php", "", nil, 0), nil)

	measure := func(quickAck bool) time.Duration {
		c := dialT(t, "tcp", addr)
		if !quickAck {
			c.sock.BeforeRead = nil
		}
		var resp Response
		var times []time.Duration
		for i := 0; i < 25; i++ {
			start := time.Now()
			if err := c.Do(req, &resp, time.Now().Add(5*time.Second)); err != nil {
				t.Fatal(err)
			}
			if i >= 5 { // the kernel starts a connection in quick-ack mode
				times = append(times, time.Since(start))
			}
		}
		return median(times)
	}

	without, with := measure(false), measure(true)
	t.Logf("median over 20 requests: %v without TCP_QUICKACK, %v with", without, with)
	// The control run proves the stall is reproduced, so the test can fail.
	if without < 25*time.Millisecond {
		t.Errorf("control run without TCP_QUICKACK did not stall (median %v); the test no longer reproduces the problem", without)
	}
	if with > 10*time.Millisecond {
		t.Errorf("median %v with TCP_QUICKACK, want well under the 40 ms delayed-ACK stall", with)
	}
}

// BenchmarkClientDo reports the client's cost per request against the
// in-process fixed responder (which is included in the time).
func BenchmarkClientDo(b *testing.B) {
	stdout := append([]byte("Content-Type: text/html\r\n\r\n"), pattern(4000)...)
	out := reply(stdout, nil, 8192, 0, 0)
	req := NewRequest(testParams("/index.php", "", nil, 0), nil)
	for _, network := range networks {
		b.Run(network, func(b *testing.B) {
			cl := NewClient(network, startFixedResponder(b, network, out), time.Second)
			defer cl.Close()
			var resp Response
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if err := cl.Do(context.Background(), req, &resp, time.Now().Add(5*time.Second)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
