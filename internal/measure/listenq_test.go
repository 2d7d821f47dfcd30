package measure

import (
	"errors"
	"net"
	"path/filepath"
	"strconv"
	"testing"
)

// TestListenQueueCountsUnacceptedConnections: connections nobody accepts wait in the queue, for a unix and a TCP
// listener, and the backlog is the listener's.
func TestListenQueueCountsUnacceptedConnections(t *testing.T) {
	for _, network := range []string{"unix", "tcp"} {
		addr := "127.0.0.1:0"
		if network == "unix" {
			addr = filepath.Join(t.TempDir(), "q.sock")
		}
		l, err := net.Listen(network, addr)
		if err != nil {
			t.Fatal(err)
		}
		addr = l.Addr().String()
		q, err := ReadListenQueue(network, addr)
		if err != nil || q.Queued != 0 || q.Backlog < 1 {
			t.Fatalf("%s: idle listener: %+v %v", network, q, err)
		}
		for i := 0; i < 3; i++ {
			c, err := net.Dial(network, addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
		}
		if q2, err := ReadListenQueue(network, addr); err != nil || q2.Queued != 3 || q2.Backlog != q.Backlog {
			t.Errorf("%s: 3 unaccepted connections: %+v %v (idle: %+v)", network, q2, err, q)
		}
		l.Close()
		if _, err := ReadListenQueue(network, addr); !errors.Is(err, ErrNoListener) {
			t.Errorf("%s: closed listener: %v", network, err)
		}
	}
}

// TestListenQueueIPv6AndDualStack: a listener on every address of a port (Go binds [::] dual-stack, as php-fpm
// does for "listen = 9000") is found from 127.0.0.1, [::1] and a bare-port address alike; one on [::1] from
// [::1].
func TestListenQueueIPv6AndDualStack(t *testing.T) {
	for _, bind := range []string{":0", "[::1]:0"} {
		l, err := net.Listen("tcp", bind)
		if err != nil {
			t.Skipf("no IPv6 here: %v", err)
		}
		defer l.Close()
		port := l.Addr().(*net.TCPAddr).Port
		reach := []string{"::1"}
		if bind == ":0" {
			reach = append(reach, "127.0.0.1")
		}
		for _, host := range reach {
			addr := net.JoinHostPort(host, strconv.Itoa(port))
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if q, err := ReadListenQueue("tcp", addr); err != nil || q.Queued < 1 || q.Backlog < 1 {
				t.Errorf("listener on %s, read from %s: %+v %v", bind, addr, q, err)
			}
		}
	}
}
