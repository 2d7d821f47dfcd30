package fcgi

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/phptune/phptune/internal/rawio"
)

// readBufSize holds a few of php-fpm's 8 KiB output chunks per read syscall.
const readBufSize = 32 << 10

// Conn is one FastCGI connection carrying one request at a time (php-fpm
// never multiplexes). It is not safe for concurrent use.
type Conn struct {
	nc net.Conn

	// sock does the reads and writes (raw syscalls where the system allows); on TCP it sets TCP_QUICKACK
	// before waiting and before each read.
	sock *rawio.Socket

	buf  []byte
	r, w int // unread bytes are buf[r:w]

	deadline time.Time // last deadline given to nc, to skip redundant syscalls
	got      bool      // a byte of the current response has been read
	done     int64     // exchanges completed on this connection
	err      error     // sticky: after a failure the stream position is unknown
}

// Dial connects to a FastCGI server. network is "tcp" (or "tcp4", "tcp6") or
// "unix". Errors satisfy errors.Is(err, ErrConnect).
func Dial(ctx context.Context, network, address string) (*Conn, error) {
	var d net.Dialer
	return dial(ctx, &d, network, address)
}

func dial(ctx context.Context, d *net.Dialer, network, address string) (*Conn, error) {
	switch network {
	case "tcp", "tcp4", "tcp6", "unix":
	default:
		return nil, fmt.Errorf("%w: unsupported network %q", ErrConnect, network)
	}
	nc, err := d.DialContext(ctx, network, address)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConnect, err)
	}
	c, err := newConn(nc)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("%w: %w", ErrConnect, err)
	}
	return c, nil
}

func newConn(nc net.Conn) (*Conn, error) {
	sock, err := rawio.NewSocket(nc)
	if err != nil {
		return nil, fmt.Errorf("raw conn: %w", err)
	}
	c := &Conn{nc: nc, buf: make([]byte, readBufSize), sock: sock}
	if tc, ok := nc.(*net.TCPConn); ok {
		// Go sets TCP_NODELAY by default; be explicit since a request that
		// waits on Nagle costs a delayed-ACK period.
		if err := tc.SetNoDelay(true); err != nil {
			return nil, fmt.Errorf("set TCP_NODELAY: %w", err)
		}
		if quickAckSupported {
			// php-fpm leaves Nagle on, so a response written in two parts
			// waits for our ACK, which Linux delays by up to 40 ms on a
			// request/response connection; quick-ack mode is not sticky,
			// hence before every read. Best effort: errors are ignored.
			sock.BeforeRead = setQuickAck
		}
	}
	return c, nil
}

// Close closes the connection.
func (c *Conn) Close() error {
	c.err = ErrClosed
	if err := c.nc.Close(); err != nil {
		return fmt.Errorf("fcgi: close: %w", err)
	}
	return nil
}

// Do sends req and reads the whole response into resp. deadline covers the
// write and the read of the whole exchange; zero means none. After an error
// the connection is unusable and should be closed. A response whose
// END_REQUEST carries a non-zero protocol status is not an error: see
// resp.ProtocolStatus.
func (c *Conn) Do(req *Request, resp *Response, deadline time.Time) error {
	if c.err != nil {
		if c.err == ErrClosed {
			return ErrClosed
		}
		return fmt.Errorf("fcgi: connection unusable after an earlier error: %w", c.err)
	}
	resp.reset()
	// Unread bytes, if any, are kept: in stream order they belong to this
	// exchange, and a server that sent extra bytes is caught as a protocol
	// error instead of being hidden.
	c.got = false
	if !deadline.Equal(c.deadline) {
		if err := c.nc.SetDeadline(deadline); err != nil {
			return c.fail(fmt.Errorf("fcgi: set deadline: %w", err))
		}
		c.deadline = deadline
	}
	if err := c.send(req.wire); err != nil {
		return c.fail(fmt.Errorf("fcgi: write request: %w", err))
	}
	if err := c.readResponse(resp); err != nil {
		return c.fail(err)
	}
	c.done++
	return nil
}

// interrupt makes a blocked Do return promptly; it may be called from another goroutine.
func (c *Conn) interrupt() {
	_ = c.nc.SetDeadline(time.Unix(1, 0)) // the Conn is dropped after the error this causes
}

// send writes p, and where it can, waits for the response to start (see rawio.Socket.Send).
func (c *Conn) send(p []byte) error { return c.sock.Send(p, c.r < c.w) }

// read reads into p.
func (c *Conn) read(p []byte) (int, error) { return c.sock.Read(p) }

func (c *Conn) fail(err error) error {
	c.err = err
	return err
}

// readResponse reads records up to and including END_REQUEST.
func (c *Conn) readResponse(resp *Response) error {
	for {
		if err := c.need(headerLen); err != nil {
			return c.headerReadError(err)
		}
		h := c.buf[c.r : c.r+headerLen]
		if h[0] != version1 {
			return c.garbage()
		}
		typ := h[1]
		id := binary.BigEndian.Uint16(h[2:])
		n := int(binary.BigEndian.Uint16(h[4:]))
		padding := int(h[6])
		c.r += headerLen

		switch typ {
		case typeStdout, typeStderr:
			if id != requestID {
				return fmt.Errorf("%w: record type %d for request ID %d, want %d", ErrProtocol, typ, id, requestID)
			}
			for n > 0 {
				if c.r == c.w {
					if err := c.fill(); err != nil {
						return c.bodyReadError(err)
					}
				}
				k := min(n, c.w-c.r)
				if typ == typeStdout {
					resp.stdout(c.buf[c.r : c.r+k])
				} else {
					resp.stderr(c.buf[c.r : c.r+k])
				}
				c.r += k
				n -= k
			}
		case typeEndRequest:
			if id != requestID {
				return fmt.Errorf("%w: END_REQUEST for request ID %d, want %d", ErrProtocol, id, requestID)
			}
			if n != 8 {
				return fmt.Errorf("%w: END_REQUEST with %d content bytes, want 8", ErrProtocol, n)
			}
			if err := c.need(8); err != nil {
				return c.bodyReadError(err)
			}
			resp.AppStatus = binary.BigEndian.Uint32(c.buf[c.r:])
			resp.ProtocolStatus = c.buf[c.r+4]
			c.r += 8
			// Consume the padding too, so that nothing of this response is
			// left in the socket for the next one.
			if err := c.skip(padding); err != nil {
				return c.bodyReadError(err)
			}
			return nil
		case typeGetValuesResult, typeUnknownType:
			// Management records (request ID 0) carry nothing for us.
			if err := c.skip(n); err != nil {
				return c.bodyReadError(err)
			}
		default:
			return fmt.Errorf("%w: unexpected record type %d", ErrProtocol, typ)
		}
		if err := c.skip(padding); err != nil {
			return c.bodyReadError(err)
		}
	}
}

// need makes at least n (<= len(c.buf)) unread bytes available in c.buf.
func (c *Conn) need(n int) error {
	for c.w-c.r < n {
		if err := c.fill(); err != nil {
			return err
		}
	}
	return nil
}

// skip discards n bytes of the stream.
func (c *Conn) skip(n int) error {
	for n > 0 {
		if c.r == c.w {
			if err := c.fill(); err != nil {
				return err
			}
		}
		k := min(n, c.w-c.r)
		c.r += k
		n -= k
	}
	return nil
}

// fill reads at least one more byte into c.buf, moving unread bytes to the
// front when the tail of the buffer is used up.
func (c *Conn) fill() error {
	if c.r == c.w {
		c.r, c.w = 0, 0
	} else if c.w == len(c.buf) {
		c.w = copy(c.buf, c.buf[c.r:c.w])
		c.r = 0
	}
	for {
		n, err := c.read(c.buf[c.w:])
		if n > 0 {
			// Any error comes back from the next Read.
			c.w += n
			c.got = true
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// headerReadError classifies a failure to read a record header.
func (c *Conn) headerReadError(err error) error {
	if err == io.EOF {
		switch {
		case !c.got:
			return fmt.Errorf("fcgi: read response: connection closed before any response: %w", err)
		case c.r == c.w:
			return fmt.Errorf("%w: connection closed before END_REQUEST", ErrProtocol)
		default:
			return fmt.Errorf("fcgi: read response: connection closed inside a record header: %w", io.ErrUnexpectedEOF)
		}
	}
	return fmt.Errorf("fcgi: read response: %w", err)
}

func (c *Conn) bodyReadError(err error) error {
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("fcgi: read response: connection closed inside a record: %w", err)
}

// garbage reports a stream that does not start with a FastCGI record header,
// quoting its start since it often is an HTTP response from a web server.
func (c *Conn) garbage() error {
	end := min(c.w, c.r+32)
	return fmt.Errorf("%w: bad record version %d, stream starts %q (not a FastCGI server?)",
		ErrProtocol, c.buf[c.r], c.buf[c.r:end])
}
