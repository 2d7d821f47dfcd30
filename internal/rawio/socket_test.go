package rawio

import (
	"bytes"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// echoPair is a TCP connection on loopback whose far end echoes what it reads, upper-cased, and closes after
// "bye"; a big request is answered once all of it has arrived.
func echoPair(t *testing.T) net.Conn {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		buf := make([]byte, 1<<20)
		for {
			n, err := c.Read(buf)
			if err != nil {
				return
			}
			if string(buf[:n]) == "bye" {
				return
			}
			c.Write(bytes.ToUpper(buf[:n]))
		}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestSocketRoundTrips: requests written through the raw path are answered and read back whole, a request
// after another; the far end's close reads as io.EOF, and a deadline as net's timeout error.
func TestSocketRoundTrips(t *testing.T) {
	nc := echoPair(t)
	s, err := NewSocket(nc)
	if err != nil {
		t.Fatal(err)
	}
	if Enabled && s.raw == nil {
		t.Fatal("a TCP connection on Linux: want the raw path")
	}
	reads := 0
	s.BeforeRead = func(uintptr) { reads++ }
	buf := make([]byte, 64)
	for _, req := range []string{"one", "two", "three"} {
		if err := s.Send([]byte(req), false); err != nil {
			t.Fatalf("send %s: %v", req, err)
		}
		got := ""
		for len(got) < len(req) {
			n, err := s.Read(buf)
			if err != nil {
				t.Fatalf("read after %s: %v", req, err)
			}
			got += string(buf[:n])
		}
		if got != strings.ToUpper(req) {
			t.Errorf("sent %s, read %q", req, got)
		}
	}
	if Enabled && reads == 0 {
		t.Error("BeforeRead never ran")
	}
	nc.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	var ne net.Error
	if _, err := s.Read(buf); !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("a read past its deadline: %v, want a timeout", err)
	}
	nc.SetReadDeadline(time.Time{})
	if err := s.Send([]byte("bye"), true); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Read(buf); err != io.EOF {
		t.Errorf("a read after the far end closed: %v, want io.EOF", err)
	}
}
