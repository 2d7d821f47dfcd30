package fcgi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/phptune/phptune/internal/ctxwatch"
)

// Client owns at most one Conn to one address and dials lazily. It hides
// php-fpm closing idle kept connections: when a reused connection fails before
// any byte of the response has been read (EOF, ECONNRESET or EPIPE on the
// write or on the first read), it closes it, redials once and retries the
// request once. A fresh connection's failure is returned as is.
//
// A Client is not safe for concurrent use, except Reconnects.
type Client struct {
	network, address string
	dialTimeout      time.Duration

	conn       *Conn
	dialed     bool // the first connection has been made
	closed     bool
	reconnects atomic.Int64

	// Cancellation: one registration per caller context interrupts the active Conn.
	watch *ctxwatch.Watch[Conn]
}

// NewClient returns a Client for network ("tcp" or "unix") and address.
// dialTimeout bounds each dial; zero means only the deadlines bound it.
func NewClient(network, address string, dialTimeout time.Duration) *Client {
	return &Client{network: network, address: address, dialTimeout: dialTimeout, watch: ctxwatch.New((*Conn).interrupt)}
}

// Do runs one exchange like Conn.Do, dialing first if needed. ctx bounds the
// dial, and its deadline, if earlier, replaces deadline. Cancelling ctx
// interrupts an exchange under way (the connection is then dropped); for zero
// allocations per request pass the same long-lived ctx each time and use
// deadline for per-request timeouts.
func (c *Client) Do(ctx context.Context, req *Request, resp *Response, deadline time.Time) error {
	if c.closed {
		return ErrClosed
	}
	c.watch.Follow(ctx)
	if err := ctx.Err(); err != nil {
		c.drop()
		return ctxError("fcgi", err)
	}
	if d, ok := ctx.Deadline(); ok && (deadline.IsZero() || d.Before(deadline)) {
		deadline = d
	}
	for attempt := 0; ; attempt++ {
		if c.conn == nil {
			if err := c.dial(ctx, deadline); err != nil {
				return err
			}
		}
		conn := c.conn
		reused := conn.done > 0
		if c.watch.Begin(conn) {
			// Cancelled between the check above and publishing the Conn.
			c.drop()
			return ctxError("fcgi: request not sent", ctx.Err())
		}
		err := conn.Do(req, resp, deadline)
		cancelled := c.watch.End()
		if err == nil {
			if cancelled {
				// A cancellation racing with completion may have poisoned the deadline.
				c.drop()
			}
			return nil
		}
		got := conn.got
		c.drop()
		if cancelled {
			return ctxError("fcgi: request aborted", ctx.Err())
		}
		if attempt > 0 || !reused || got || !peerClosed(err) {
			return err
		}
	}
}

// ctxError reports a context's end; a context deadline is a timeout whichever way it was given.
func ctxError(prefix string, err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s: %w: %w", prefix, os.ErrDeadlineExceeded, err)
	}
	return fmt.Errorf("%s: %w", prefix, err)
}

// peerClosed reports errors meaning the server had closed the connection.
func peerClosed(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNABORTED)
}

func (c *Client) dial(ctx context.Context, deadline time.Time) error {
	d := net.Dialer{Timeout: c.dialTimeout, Deadline: deadline}
	conn, err := dial(ctx, &d, c.network, c.address)
	if err != nil {
		return err
	}
	c.conn = conn
	if c.dialed {
		c.reconnects.Add(1)
	}
	c.dialed = true
	return nil
}

func (c *Client) drop() {
	if c.conn != nil {
		_ = c.conn.Close() // the connection is being discarded after an error
		c.conn = nil
	}
}

// Close closes the current connection, if any; later calls to Do fail.
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

// Reconnects reports how many connections were made after the first one.
// It is safe to call concurrently with Do.
func (c *Client) Reconnects() int64 { return c.reconnects.Load() }
