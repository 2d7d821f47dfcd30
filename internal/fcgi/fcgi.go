// Package fcgi is a FastCGI client for driving php-fpm directly, built for a
// load generator: requests are encoded once and shared, and a request/response
// exchange on an established connection allocates nothing.
//
// php-fpm never multiplexes, so a connection carries one request at a time and
// every request uses request ID 1.
package fcgi

import "errors"

// Record types (FastCGI 1.0, section 8).
const (
	typeBeginRequest    = 1
	typeAbortRequest    = 2
	typeEndRequest      = 3
	typeParams          = 4
	typeStdin           = 5
	typeStdout          = 6
	typeStderr          = 7
	typeData            = 8
	typeGetValues       = 9
	typeGetValuesResult = 10
	typeUnknownType     = 11
)

const (
	version1      = 1
	roleResponder = 1
	flagKeepConn  = 1
	requestID     = 1
	headerLen     = 8

	// maxContent is the largest record content sent: 8-aligned, so it needs
	// no padding, and within php-fpm's limit of 65535 for content+padding.
	maxContent = 65528
)

// Protocol status values carried by END_REQUEST (Response.ProtocolStatus).
const (
	StatusRequestComplete = 0
	StatusCantMultiplex   = 1
	StatusOverloaded      = 2
	StatusUnknownRole     = 3
)

// Error classes; test with errors.Is. A deadline expiry instead satisfies
// errors.Is(err, os.ErrDeadlineExceeded), and anything else is an I/O error.
var (
	// ErrConnect means the dial failed (refused, no such socket, timeout).
	ErrConnect = errors.New("fcgi: connect failed")
	// ErrProtocol means the peer is not speaking FastCGI correctly.
	ErrProtocol = errors.New("fcgi: protocol error")
	// ErrClosed is returned by a Client or Conn used after Close.
	ErrClosed = errors.New("fcgi: use of closed connection")
)
