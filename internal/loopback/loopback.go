// Package loopback finds TCP ports on 127.0.0.1 for the servers phptune starts (nginx, TCP pools, Tarantool,
// Redis): one way to pick a free port and to check that a given one is free.
package loopback

import (
	"fmt"
	"net"
	"strconv"
)

// FreePort is a port on 127.0.0.1 that was free a moment ago: the kernel's pick for a listener closed at once.
// Another process may take it before the caller binds it; callers that can retry do (stack.ErrPortTaken).
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Available says whether port can be bound on 127.0.0.1 now (nil), or why not.
func Available(port int) error {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return err
	}
	return l.Close()
}
