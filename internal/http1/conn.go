package http1

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"time"

	"github.com/phptune/phptune/internal/rawio"
)

const (
	// MaxHeaderBytes bounds a response's header block (status line, fields
	// and interim 1xx responses) and, separately, a chunked body's trailers.
	MaxHeaderBytes = 64 << 10

	initialBufSize  = 8 << 10  // like wrk's receive buffer; most responses fit
	maxBufSize      = 64 << 10 // the longest line we accept, and the size used for big bodies
	minReadSpace    = 1 << 10  // compact before reading into less room than this
	maxBodyPrealloc = 1 << 20  // cap on trusting Content-Length when pre-sizing a kept body
	maxEmptyReads   = 100      // like bufio: give up on a reader returning (0, nil) forever
)

var (
	errServerClosing = errors.New("http1: connection closed by the server after the previous response")
	errConnClosed    = fmt.Errorf("http1: %w", net.ErrClosed)
)

// Response is reused across calls; Do resets it except for KeepBody.
type Response struct {
	Status      int   // final status code (1xx interim responses are skipped)
	HeaderBytes int64 // status lines, header fields and trailers, including line endings
	BodyBytes   int64 // body payload bytes (after removing chunk framing)
	WireBytes   int64 // every response byte read from the connection
	// KeepBody is set by the caller: when true, Body holds the body in a
	// reused buffer; otherwise the body is only counted and discarded.
	KeepBody bool
	Body     []byte
	// Close reports that the connection cannot carry another request: the
	// server said Connection: close, answered HTTP/1.0 without keep-alive,
	// delimited the body by closing, or the request asked for close.
	Close bool
}

func (r *Response) reset() {
	r.Status = 0
	r.HeaderBytes = 0
	r.BodyBytes = 0
	r.WireBytes = 0
	r.Body = r.Body[:0]
	r.Close = false
}

// Conn is one HTTP/1.1 connection. It is not safe for concurrent use.
type Conn struct {
	nc net.Conn

	// buf[r:w] holds received bytes not yet parsed; seen counts those
	// already known to contain no '\n' so split lines are not rescanned.
	buf      []byte
	r, w     int
	seen     int
	deadline time.Time // deadline currently set on nc, to skip redundant updates

	// sock does the reads and writes (raw syscalls where the system allows).
	sock *rawio.Socket

	requests int64 // completed exchanges; > 0 means the connection is reused
	got      bool  // a byte of the current response has been received
	err      error // sticky: once set the connection is unusable
}

// Dial connects to address and returns a Conn with TCP_NODELAY set, since
// requests are single small writes that must not wait for Nagle.
// network is "tcp", "tcp4", "tcp6" or "unix".
func Dial(ctx context.Context, network, address string) (*Conn, error) {
	var d net.Dialer
	return dial(ctx, &d, network, address)
}

func dial(ctx context.Context, d *net.Dialer, network, address string) (*Conn, error) {
	nc, err := d.DialContext(ctx, network, address)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConnect, err)
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		if err := tc.SetNoDelay(true); err != nil {
			_ = nc.Close()
			return nil, fmt.Errorf("%w: set TCP_NODELAY: %w", ErrConnect, err)
		}
	}
	return NewConn(nc), nil
}

// NewConn wraps an established connection (for example a TLS or in-memory one).
func NewConn(nc net.Conn) *Conn {
	c := &Conn{nc: nc, buf: make([]byte, initialBufSize)}
	sock, err := rawio.NewSocket(nc)
	if err != nil {
		sock, _ = rawio.NewSocket(plainConn{nc}) // no raw access: plain reads and writes
	}
	c.sock = sock
	return c
}

// Close closes the underlying connection.
func (c *Conn) Close() error {
	if c.err == nil {
		c.err = errConnClosed
	}
	if err := c.nc.Close(); err != nil {
		return fmt.Errorf("http1: close: %w", err)
	}
	return nil
}

// Do sends req and reads the response into resp. The deadline covers the
// whole exchange; the zero time means none. After any error, or a response
// with Close set, the Conn is unusable and further calls fail.
func (c *Conn) Do(req *Request, resp *Response, deadline time.Time) error {
	resp.reset()
	if c.err != nil {
		return c.err
	}
	if err := c.setDeadline(deadline); err != nil {
		return c.fail(err)
	}
	// Bytes left over from an earlier response count as received: such a
	// connection is not a clean idle one and must not be retried blindly.
	c.got = c.r < c.w
	if err := c.send(req.wire); err != nil {
		return c.fail(fmt.Errorf("http1: write request: %w", err))
	}
	if err := c.readResponse(req, resp); err != nil {
		return c.fail(err)
	}
	c.requests++
	if resp.Close {
		c.err = errServerClosing
	}
	return nil
}

// send writes p, and where it can, waits for the response to start (see rawio.Socket.Send).
func (c *Conn) send(p []byte) error { return c.sock.Send(p, c.r < c.w) }

// read reads into p.
func (c *Conn) read(p []byte) (int, error) { return c.sock.Read(p) }

// plainConn hides a connection's syscall.Conn, so that rawio.Socket uses plain reads and writes.
type plainConn struct{ net.Conn }

func (c *Conn) fail(err error) error {
	c.err = err
	return err
}

// setDeadline skips the update when the deadline is unchanged; it is cheap
// either way (no syscall), but most runs use no deadline at all.
func (c *Conn) setDeadline(t time.Time) error {
	if t.Equal(c.deadline) {
		return nil
	}
	if err := c.nc.SetDeadline(t); err != nil {
		return fmt.Errorf("http1: set deadline: %w", err)
	}
	c.deadline = t
	return nil
}

// interrupt makes a blocked Do return promptly; it may be called from
// another goroutine. The Conn must be discarded afterwards.
func (c *Conn) interrupt() {
	_ = c.nc.SetDeadline(time.Unix(1, 0))
}

func (c *Conn) readResponse(req *Request, resp *Response) error {
	var h header
	for {
		h = header{contentLength: -1}
		if err := c.readHeader(resp, &h); err != nil {
			return err
		}
		if h.status >= 200 {
			break
		}
		if h.status == 101 {
			return fmt.Errorf("%w: unexpected 101 Switching Protocols", ErrProtocol)
		}
		// Other 1xx responses (100 Continue, 103 Early Hints) are interim and
		// bodiless; the final response follows on the same connection.
	}
	resp.Status = h.status
	resp.Close = h.connClose || (h.minor == 0 && !h.connKeepAlive) || !req.keepAlive

	switch {
	case req.head || h.status == 204 || h.status == 304:
		return nil
	case h.chunked:
		return c.readChunked(resp)
	case h.te:
		// RFC 9112 6.3: a non-chunked transfer coding means read until close.
		resp.Close = true
		return c.readUntilEOF(resp)
	case h.contentLength >= 0:
		return c.readBody(resp, h.contentLength)
	default:
		resp.Close = true
		return c.readUntilEOF(resp)
	}
}

func (c *Conn) readHeader(resp *Response, h *header) error {
	line, n, err := c.line()
	if err != nil {
		if err == io.EOF && resp.WireBytes == 0 {
			// Nothing of the response arrived: typically an idle keep-alive
			// connection the server closed, which the Client retries.
			return fmt.Errorf("http1: read response: %w", io.EOF)
		}
		return readErr(err)
	}
	resp.HeaderBytes += int64(n)
	resp.WireBytes += int64(n)
	if err := parseStatusLine(line, h); err != nil {
		return err
	}
	for {
		line, n, err := c.line()
		if err != nil {
			return readErr(err)
		}
		resp.HeaderBytes += int64(n)
		resp.WireBytes += int64(n)
		if resp.HeaderBytes > MaxHeaderBytes {
			return fmt.Errorf("%w: response header over %d bytes", ErrProtocol, MaxHeaderBytes)
		}
		if len(line) == 0 {
			return nil
		}
		if err := parseField(line, h); err != nil {
			return err
		}
	}
}

// readBody consumes n body bytes, keeping them only if asked to.
func (c *Conn) readBody(resp *Response, n int64) error {
	if resp.KeepBody && int64(cap(resp.Body)-len(resp.Body)) < n {
		resp.Body = slices.Grow(resp.Body, int(min(n, maxBodyPrealloc)))
	}
	for n > 0 {
		if c.r == c.w {
			if n >= maxBufSize && len(c.buf) < maxBufSize {
				// Large bodies take fewer read syscalls with a bigger buffer;
				// it is empty now, so nothing needs copying.
				c.buf = make([]byte, maxBufSize)
				c.r, c.w, c.seen = 0, 0, 0
			}
			if err := c.fill(); err != nil {
				return readErr(err)
			}
		}
		k := c.w - c.r
		if int64(k) > n {
			k = int(n)
		}
		if resp.KeepBody {
			resp.Body = append(resp.Body, c.buf[c.r:c.r+k]...)
		}
		c.r += k
		n -= int64(k)
		resp.BodyBytes += int64(k)
		resp.WireBytes += int64(k)
	}
	return nil
}

func (c *Conn) readChunked(resp *Response) error {
	for {
		line, n, err := c.line()
		if err != nil {
			return readErr(err)
		}
		resp.WireBytes += int64(n)
		size, ok := parseChunkSize(line)
		if !ok {
			return fmt.Errorf("%w: bad chunk size line %q", ErrProtocol, clip(line))
		}
		if size == 0 {
			break
		}
		if err := c.readBody(resp, size); err != nil {
			return err
		}
		line, n, err = c.line()
		if err != nil {
			return readErr(err)
		}
		resp.WireBytes += int64(n)
		if len(line) != 0 {
			return fmt.Errorf("%w: chunk data not followed by CRLF", ErrProtocol)
		}
	}
	// Trailer fields are counted as header bytes and otherwise ignored.
	var trailer int
	for {
		line, n, err := c.line()
		if err != nil {
			return readErr(err)
		}
		resp.WireBytes += int64(n)
		resp.HeaderBytes += int64(n)
		trailer += n
		if trailer > MaxHeaderBytes {
			return fmt.Errorf("%w: trailer over %d bytes", ErrProtocol, MaxHeaderBytes)
		}
		if len(line) == 0 {
			return nil
		}
	}
}

// readUntilEOF consumes a body delimited by the server closing the connection.
func (c *Conn) readUntilEOF(resp *Response) error {
	for {
		k := c.w - c.r
		if resp.KeepBody {
			resp.Body = append(resp.Body, c.buf[c.r:c.w]...)
		}
		c.r = c.w
		resp.BodyBytes += int64(k)
		resp.WireBytes += int64(k)
		if err := c.fill(); err != nil {
			if err == io.EOF {
				return nil
			}
			return readErr(err)
		}
	}
}

// line returns the next line without its line ending (CRLF or bare LF),
// valid until the next read, and the number of bytes it consumed. It returns
// io.EOF only if the connection ended exactly at a line boundary.
func (c *Conn) line() ([]byte, int, error) {
	for {
		if i := bytes.IndexByte(c.buf[c.r+c.seen:c.w], '\n'); i >= 0 {
			end := c.r + c.seen + i + 1
			line := c.buf[c.r : end-1]
			n := end - c.r
			c.r, c.seen = end, 0
			if k := len(line); k > 0 && line[k-1] == '\r' {
				line = line[:k-1]
			}
			return line, n, nil
		}
		c.seen = c.w - c.r
		if c.seen >= maxBufSize {
			return nil, 0, fmt.Errorf("%w: line longer than %d bytes", ErrProtocol, maxBufSize)
		}
		if err := c.fill(); err != nil {
			if err == io.EOF && c.r < c.w {
				err = io.ErrUnexpectedEOF
			}
			return nil, 0, err
		}
	}
}

// fill reads at least one byte into buf[w:], making room first by
// rewinding, compacting or growing the buffer.
func (c *Conn) fill() error {
	switch {
	case c.r == c.w:
		c.r, c.w = 0, 0
	case c.r > 0 && len(c.buf)-c.w < minReadSpace:
		c.w = copy(c.buf, c.buf[c.r:c.w])
		c.r = 0
	case c.w == len(c.buf):
		if len(c.buf) >= maxBufSize {
			return fmt.Errorf("%w: read buffer full", ErrProtocol)
		}
		buf := make([]byte, min(2*len(c.buf), maxBufSize))
		c.w = copy(buf, c.buf[c.r:c.w])
		c.r = 0
		c.buf = buf
	}
	for range maxEmptyReads {
		n, err := c.read(c.buf[c.w:])
		if n > 0 {
			// An error alongside data is reported again by the next read.
			c.w += n
			c.got = true
			return nil
		}
		if err != nil {
			return err
		}
	}
	return io.ErrNoProgress
}

// readErr wraps a read failure in the middle of a response: EOF there means
// the response was truncated.
func readErr(err error) error {
	if errors.Is(err, ErrProtocol) {
		return err
	}
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("http1: read response: %w", err)
}
