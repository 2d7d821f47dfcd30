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
}

// NewClient returns a Client for network ("tcp" or "unix") and address.
// dialTimeout bounds each dial; zero means only the deadlines bound it.
func NewClient(network, address string, dialTimeout time.Duration) *Client {
	return &Client{network: network, address: address, dialTimeout: dialTimeout}
}

// Do runs one exchange like Conn.Do, dialing first if needed. ctx bounds the
// dial, and its deadline, if earlier, replaces deadline; cancelling ctx
// without a deadline does not interrupt an exchange already under way.
func (c *Client) Do(ctx context.Context, req *Request, resp *Response, deadline time.Time) error {
	if c.closed {
		return ErrClosed
	}
	if err := ctx.Err(); err != nil {
		if err == context.DeadlineExceeded {
			// Keep the one test for timeouts valid: os.ErrDeadlineExceeded.
			return fmt.Errorf("fcgi: %w (%w)", err, os.ErrDeadlineExceeded)
		}
		return fmt.Errorf("fcgi: %w", err)
	}
	if d, ok := ctx.Deadline(); ok && (deadline.IsZero() || d.Before(deadline)) {
		deadline = d
	}
	if c.conn == nil {
		if err := c.dial(ctx, deadline); err != nil {
			return err
		}
	}
	err := c.conn.Do(req, resp, deadline)
	if err == nil {
		return nil
	}
	retry := c.conn.done > 0 && !c.conn.got && peerClosed(err)
	c.drop()
	if !retry {
		return err
	}
	if err := c.dial(ctx, deadline); err != nil {
		return err
	}
	if err := c.conn.Do(req, resp, deadline); err != nil {
		c.drop()
		return err
	}
	return nil
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
