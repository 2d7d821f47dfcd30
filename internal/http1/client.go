package http1

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/phptune/phptune/internal/ctxwatch"
)

// Client owns at most one connection to a server, dialing lazily and
// redialing when the server ends the connection. It is not safe for
// concurrent use, except for Reconnects; a load generator runs one Client
// per simulated connection.
type Client struct {
	network  string
	address  string // as given; used for the first dial
	dialAddr string // resolved peer address, reused so redials skip name lookup
	dialer   net.Dialer

	conn       *Conn
	dials      int64
	reconnects atomic.Int64
	closed     bool

	// Context cancellation interrupts an in-flight exchange through one
	// registration per distinct context: a long-lived context costs nothing
	// per request.
	watch *ctxwatch.Watch[Conn]
}

// NewClient returns a Client for the server at address. dialTimeout bounds
// each dial (zero means no limit besides the request deadline and context).
func NewClient(network, address string, dialTimeout time.Duration) *Client {
	return &Client{
		network: network,
		address: address,
		dialer:  net.Dialer{Timeout: dialTimeout},
		watch:   ctxwatch.New((*Conn).interrupt),
	}
}

// Do sends req and reads the response into resp, dialing if needed.
//
// ctx interrupts dialing and the exchange; for zero allocations per request
// pass the same long-lived context each time and use deadline for
// per-request timeouts. deadline covers the whole exchange including a dial;
// the zero time means none. If the server closes a reused connection before
// sending any response byte (it timed out the idle keep-alive connection),
// Do redials and resends once; this applies to every method, as in wrk.
//
// Errors: ErrConnect when dialing fails, ErrProtocol for malformed
// responses, os.ErrDeadlineExceeded when the deadline passes, ctx.Err() when
// ctx ends, I/O errors otherwise. After an error the connection is closed.
func (c *Client) Do(ctx context.Context, req *Request, resp *Response, deadline time.Time) error {
	if c.closed {
		return errClientClosed
	}
	c.watch.Follow(ctx)
	if ctx.Err() != nil {
		c.closeConn()
		return fmt.Errorf("http1: request not sent: %w", ctx.Err())
	}
	for attempt := 0; ; attempt++ {
		if c.conn == nil {
			if err := c.dial(ctx, deadline); err != nil {
				resp.reset()
				return err
			}
		}
		conn := c.conn
		reused := conn.requests > 0
		// Set the deadline before publishing the Conn: a cancellation that
		// lands after the done check below then cannot be overwritten.
		if err := conn.setDeadline(deadline); err != nil {
			c.closeConn()
			resp.reset()
			return err
		}
		if c.watch.Begin(conn) {
			c.closeConn()
			resp.reset()
			return fmt.Errorf("http1: request not sent: %w", ctx.Err())
		}
		err := conn.Do(req, resp, deadline)
		cancelled := c.watch.End()
		if err == nil {
			// A cancellation racing with completion may have poisoned the
			// connection's deadline, so drop it too.
			if resp.Close || cancelled {
				c.closeConn()
			}
			return nil
		}
		got := conn.got
		c.closeConn()
		if cancelled {
			// Report the cancellation, not the deadline error used to interrupt.
			return fmt.Errorf("http1: request aborted: %w", ctx.Err())
		}
		if attempt == 0 && reused && !got && idleClosed(err) {
			continue
		}
		return err
	}
}

// Close closes the connection and releases the context registration. The
// Client cannot be used afterwards.
func (c *Client) Close() error {
	c.closed = true
	c.watch.Release()
	if c.conn == nil {
		return nil
	}
	err := c.conn.Close()
	c.conn = nil
	return err
}

// Reconnects returns the number of successful dials after the first one. It
// may be called from any goroutine.
func (c *Client) Reconnects() int64 { return c.reconnects.Load() }

var errClientClosed = fmt.Errorf("http1: client: %w", net.ErrClosed)

func (c *Client) dial(ctx context.Context, deadline time.Time) error {
	addr := c.address
	if c.dialAddr != "" {
		addr = c.dialAddr
	}
	c.dialer.Deadline = deadline
	conn, err := dial(ctx, &c.dialer, c.network, addr)
	if err != nil {
		return err
	}
	if c.dials > 0 {
		c.reconnects.Add(1)
	}
	c.dials++
	if c.dialAddr == "" {
		if ta, ok := conn.nc.RemoteAddr().(*net.TCPAddr); ok {
			c.dialAddr = ta.String()
		}
	}
	c.conn = conn
	return nil
}

func (c *Client) closeConn() {
	if c.conn != nil {
		_ = c.conn.Close() // the connection is being discarded; nothing to report
		c.conn = nil
	}
}

// idleClosed reports errors by which a server shows it had already closed
// an idle connection: EOF before any response, reset, or broken pipe.
func idleClosed(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}
