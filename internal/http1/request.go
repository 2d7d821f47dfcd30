// Package http1 is a minimal HTTP/1.1 client for load generation.
//
// It exists because net/http allocates and spends CPU per request, which
// distorts a benchmark's measurements. Requests are encoded once, responses
// are parsed in place from a per-connection buffer, and bodies are counted
// and discarded unless the caller asks to keep them, so a warmed-up
// connection performs no allocations per request.
package http1

import (
	"errors"
	"strconv"
)

// ErrConnect reports that dialing the server failed.
var ErrConnect = errors.New("http1: connect failed")

// ErrProtocol reports a response the client cannot parse: malformed status
// line, header field or chunk framing, or a header block over MaxHeaderBytes.
var ErrProtocol = errors.New("http1: protocol error")

// Request is an immutable, pre-encoded HTTP/1.1 request. It is safe to share
// across goroutines.
type Request struct {
	wire      []byte
	method    string
	head      bool // HEAD responses never carry a body
	keepAlive bool // false when we asked the server to close
}

// NewRequest encodes a request once so that sending it is a single write.
//
// A Host header is sent from host unless headers contain one. When keepAlive
// is false, "Connection: close" is added unless headers contain a Connection
// field. Content-Length is added when body is non-empty, or non-nil and empty
// for POST, PUT and PATCH, unless headers already give Content-Length or
// Transfer-Encoding. headers are otherwise sent as given, in order. An empty
// method means GET and an empty requestURI means "/".
func NewRequest(method, host, requestURI string, headers [][2]string, body []byte, keepAlive bool) *Request {
	if method == "" {
		method = "GET"
	}
	if requestURI == "" {
		requestURI = "/"
	}
	var hasHost, hasConnection, hasLength, userClose bool
	size := len(method) + len(requestURI) + len(host) + len(body) + 64
	for _, h := range headers {
		size += len(h[0]) + len(h[1]) + 4
		switch {
		case equalFold([]byte(h[0]), "host"):
			hasHost = true
		case equalFold([]byte(h[0]), "connection"):
			hasConnection = true
			userClose = userClose || hasToken([]byte(h[1]), "close")
		case equalFold([]byte(h[0]), "content-length"), equalFold([]byte(h[0]), "transfer-encoding"):
			hasLength = true
		}
	}

	b := make([]byte, 0, size)
	b = append(b, method...)
	b = append(b, ' ')
	b = append(b, requestURI...)
	b = append(b, " HTTP/1.1\r\n"...)
	if !hasHost {
		b = append(b, "Host: "...)
		b = append(b, host...)
		b = append(b, "\r\n"...)
	}
	for _, h := range headers {
		b = append(b, h[0]...)
		b = append(b, ": "...)
		b = append(b, h[1]...)
		b = append(b, "\r\n"...)
	}
	if !keepAlive && !hasConnection {
		b = append(b, "Connection: close\r\n"...)
	}
	if !hasLength && (len(body) > 0 || (body != nil && bodyMethod(method))) {
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, int64(len(body)), 10)
		b = append(b, "\r\n"...)
	}
	b = append(b, "\r\n"...)
	b = append(b, body...)

	return &Request{
		wire:      b,
		method:    method,
		head:      method == "HEAD",
		keepAlive: keepAlive && !userClose,
	}
}

// Method returns the request method.
func (r *Request) Method() string { return r.method }

// Len returns the number of bytes sent per request (head and body).
func (r *Request) Len() int { return len(r.wire) }

// Bytes returns the encoded request. The caller must not modify it.
func (r *Request) Bytes() []byte { return r.wire }

// bodyMethod reports whether an empty body should still be announced with
// "Content-Length: 0"; servers may reject these methods without a length.
func bodyMethod(method string) bool {
	return method == "POST" || method == "PUT" || method == "PATCH"
}
