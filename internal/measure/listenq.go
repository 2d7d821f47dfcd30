package measure

// A listening socket's accept queue as the kernel keeps it, asked through NETLINK_SOCK_DIAG as ss(8) does:
// php-fpm's status page reports its listen queue for TCP only (on Linux a unix socket's reads 0, "listen queue
// len" too), and only when a worker is free to answer; the kernel answers for both, at any load, without a
// request to the pool.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"strconv"
	"syscall"
	"unsafe"
)

// ListenQueue is a listening socket's accept queue: connections waiting for php-fpm to accept them, against
// the backlog beyond which the kernel refuses (unix) or drops (TCP) new ones.
type ListenQueue struct {
	Queued  int `json:"queued"`
	Backlog int `json:"backlog"`
}

// ErrNoListener means no listening socket matches the address in this network namespace.
var ErrNoListener = errors.New("no listening socket there")

const (
	netlinkSockDiag  = 4  // NETLINK_SOCK_DIAG (NETLINK_INET_DIAG)
	sockDiagByFamily = 20 // SOCK_DIAG_BY_FAMILY
	tcpListen        = 10 // TCP_LISTEN, also the state of a listening unix socket
	udiagShowName    = 0x01
	udiagShowRQLen   = 0x10
	unixDiagName     = 0
	unixDiagRQLen    = 4
)

// ReadListenQueue reads the accept queue of the socket a pool listens on: network "unix" (a socket path) or
// "tcp" (HOST:PORT; a listener on the wildcard address of the port matches too).
func ReadListenQueue(network, address string) (ListenQueue, error) {
	switch network {
	case "unix":
		return unixListenQueue(address)
	case "tcp":
		return tcpListenQueue(address)
	}
	return ListenQueue{}, fmt.Errorf("listen queue of %s %s: want unix or tcp", network, address)
}

func unixListenQueue(path string) (ListenQueue, error) {
	req := make([]byte, 24) // struct unix_diag_req
	req[0] = syscall.AF_UNIX
	binary.NativeEndian.PutUint32(req[4:], 1<<tcpListen)
	binary.NativeEndian.PutUint32(req[12:], udiagShowName|udiagShowRQLen)
	var out ListenQueue
	found := false
	err := sockDiag(req, func(msg []byte) {
		if len(msg) < 16 || found {
			return
		}
		var name string
		var q ListenQueue
		hasQ := false
		forAttrs(msg[16:], func(typ uint16, data []byte) {
			switch {
			case typ == unixDiagName:
				name = string(bytes.TrimRight(data, "\x00")) // the address length may count the path's NUL
			case typ == unixDiagRQLen && len(data) >= 8:
				q = ListenQueue{Queued: int(binary.NativeEndian.Uint32(data)), Backlog: int(binary.NativeEndian.Uint32(data[4:]))}
				hasQ = true
			}
		})
		if name == path && hasQ {
			out, found = q, true
		}
	})
	if err != nil {
		return ListenQueue{}, fmt.Errorf("listen queue of %s: %w", path, err)
	}
	if !found {
		return ListenQueue{}, fmt.Errorf("listen queue of %s: %w", path, ErrNoListener)
	}
	return out, nil
}

// tcpListenQueue finds the listener a client of address reaches: bound to its IP, else to its family's wildcard;
// for an IPv4 address also an IPv6 socket bound to it v4-mapped or to [::] (php-fpm's "listen = 9000" binds
// [::] dual-stack where the host has IPv6, and a client of 127.0.0.1 reaches it).
func tcpListenQueue(address string) (ListenQueue, error) {
	ip, port, err := resolveTCP(address)
	if err != nil {
		return ListenQueue{}, fmt.Errorf("listen queue of %s: %w", address, err)
	}
	var found *ListenQueue
	if v4 := ip.To4(); v4 != nil {
		found, err = inetListener(syscall.AF_INET, v4, port)
		if err == nil && found == nil {
			found, err = inetListener(syscall.AF_INET6, v4.To16(), port) // ::ffff:a.b.c.d, or [::]
		}
	} else {
		found, err = inetListener(syscall.AF_INET6, ip.To16(), port)
	}
	if err != nil {
		return ListenQueue{}, fmt.Errorf("listen queue of %s: %w", address, err)
	}
	if found == nil {
		return ListenQueue{}, fmt.Errorf("listen queue of %s: %w", address, ErrNoListener)
	}
	return *found, nil
}

// resolveTCP is HOST:PORT's first address and its port.
func resolveTCP(address string) (net.IP, int, error) {
	host, portStr, err := net.SplitHostPort(address)
	if err != nil {
		return nil, 0, err
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return nil, 0, fmt.Errorf("port %q is not a number", portStr)
	}
	ips, err := net.LookupIP(host)
	if err != nil {
		return nil, 0, err
	}
	if len(ips) == 0 {
		return nil, 0, fmt.Errorf("%s has no address", host)
	}
	return ips[0], port, nil
}

// inetListener is the queue of the listening TCP socket of family on port bound to addr (16 bytes for
// AF_INET6), else to the family's wildcard address; nil when neither listens.
func inetListener(family byte, addr net.IP, port int) (*ListenQueue, error) {
	req := make([]byte, 56) // struct inet_diag_req_v2
	req[0], req[1] = family, syscall.IPPROTO_TCP
	binary.NativeEndian.PutUint32(req[4:], 1<<tcpListen)
	var exact, wildcard *ListenQueue
	err := sockDiag(req, func(msg []byte) {
		if len(msg) < 72 { // struct inet_diag_msg
			return
		}
		if int(binary.BigEndian.Uint16(msg[4:])) != port {
			return
		}
		src := net.IP(msg[8 : 8+len(addr)])
		q := ListenQueue{Queued: int(binary.NativeEndian.Uint32(msg[56:])), Backlog: int(binary.NativeEndian.Uint32(msg[60:]))}
		switch {
		case src.Equal(addr):
			exact = &q
		case src.IsUnspecified():
			wildcard = &q
		}
	})
	if err != nil {
		return nil, err
	}
	if exact != nil {
		return exact, nil
	}
	return wildcard, nil
}

// sockDiag sends one SOCK_DIAG_BY_FAMILY dump request (req is the family's request struct) and calls each for
// every message of the answer, header removed.
func sockDiag(req []byte, each func(msg []byte)) error {
	fd, err := syscall.Socket(syscall.AF_NETLINK, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, netlinkSockDiag)
	if err != nil {
		return fmt.Errorf("netlink socket: %w", err)
	}
	defer syscall.Close(fd)
	if err := syscall.Bind(fd, &syscall.SockaddrNetlink{Family: syscall.AF_NETLINK}); err != nil {
		return fmt.Errorf("netlink bind: %w", err)
	}
	msg := make([]byte, syscall.NLMSG_HDRLEN+len(req))
	binary.NativeEndian.PutUint32(msg[0:], uint32(len(msg)))
	binary.NativeEndian.PutUint16(msg[4:], sockDiagByFamily)
	binary.NativeEndian.PutUint16(msg[6:], syscall.NLM_F_REQUEST|syscall.NLM_F_DUMP)
	binary.NativeEndian.PutUint32(msg[8:], 1)
	copy(msg[syscall.NLMSG_HDRLEN:], req)
	if err := syscall.Sendto(fd, msg, 0, &syscall.SockaddrNetlink{Family: syscall.AF_NETLINK}); err != nil {
		return fmt.Errorf("netlink send: %w", err)
	}
	buf := make([]byte, 32<<10)
	for {
		n, _, err := syscall.Recvfrom(fd, buf, 0)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("netlink receive: %w", err)
		}
		msgs, err := syscall.ParseNetlinkMessage(buf[:n])
		if err != nil {
			return fmt.Errorf("netlink answer: %w", err)
		}
		for _, m := range msgs {
			switch m.Header.Type {
			case syscall.NLMSG_DONE:
				return nil
			case syscall.NLMSG_ERROR:
				if len(m.Data) >= 4 {
					if code := int32(binary.NativeEndian.Uint32(m.Data)); code != 0 {
						return fmt.Errorf("netlink: %w", syscall.Errno(-code))
					}
				}
				return nil
			}
			each(m.Data)
		}
	}
}

// forAttrs walks netlink attributes (struct rtattr: length, type, data padded to 4 bytes).
func forAttrs(b []byte, f func(typ uint16, data []byte)) {
	const hdr = int(unsafe.Sizeof(syscall.RtAttr{}))
	for len(b) >= hdr {
		l := int(binary.NativeEndian.Uint16(b))
		if l < hdr || l > len(b) {
			return
		}
		f(binary.NativeEndian.Uint16(b[2:]), b[hdr:l])
		l = (l + 3) &^ 3
		if l > len(b) {
			return
		}
		b = b[l:]
	}
}
