package http1

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

type respCase struct {
	name        string
	method      string // GET when empty
	reqClose    bool   // request sent with keepAlive=false
	raw         string
	status      int
	body        string
	close       bool // expected Response.Close
	headerBytes int  // checked when > 0
	wireBytes   int  // expected WireBytes; len(raw) when 0
	err         error
	whole       bool // too large to replay byte by byte and at every split
}

const (
	chunkedHead  = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
	chunkedTrail = "X-Checksum: 1\r\nX-Other: 2\r\n\r\n"
	chunkedBody  = "5;name=value\r\nhello\r\n6 ; a=\"b\"\r\n world\r\nA\r\n0123456789\r\n0;last\r\n"
	continueHead = "HTTP/1.1 100 Continue\r\n\r\n"
	earlyHints   = "HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n"
)

var respCases = []respCase{
	{name: "content-length", raw: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Type: text/plain\r\n\r\nhello",
		status: 200, body: "hello", headerBytes: len("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Type: text/plain\r\n\r\n")},
	{name: "content-length zero", raw: "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", status: 200},
	{name: "content-length OWS", raw: "HTTP/1.1 200 OK\r\nContent-Length: \t 7  \r\n\r\n1234567", status: 200, body: "1234567"},
	{name: "header names case-insensitive", raw: "HTTP/1.1 201 Created\r\ncontent-LENGTH:3\r\nCONNECTION: Keep-Alive, CLOSE\r\n\r\nabc",
		status: 201, body: "abc", close: true},
	{name: "chunked extensions trailers", raw: chunkedHead + chunkedBody + chunkedTrail,
		status: 200, body: "hello world0123456789", headerBytes: len(chunkedHead) + len(chunkedTrail)},
	{name: "chunked no trailers", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, CHUNKED\r\n\r\n3\r\nabc\r\na\r\n0123456789\r\n0\r\n\r\n",
		status: 200, body: "abc0123456789"},
	{name: "chunked wins over content-length", raw: "HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n",
		status: 200, body: "ok"},
	{name: "close-delimited", raw: "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nhello world", status: 200, body: "hello world", close: true},
	{name: "non-chunked transfer-encoding", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: identity\r\n\r\nraw", status: 200, body: "raw", close: true},
	{name: "HTTP/1.0 content-length", raw: "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", status: 200, body: "ok", close: true},
	{name: "HTTP/1.0 keep-alive", raw: "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok", status: 200, body: "ok"},
	{name: "HTTP/1.0 close-delimited", raw: "HTTP/1.0 200 OK\r\n\r\nto the end", status: 200, body: "to the end", close: true},
	{name: "HEAD content-length", method: "HEAD", raw: "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n", status: 200},
	{name: "HEAD chunked", method: "HEAD", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", status: 200},
	{name: "204", raw: "HTTP/1.1 204 No Content\r\n\r\n", status: 204},
	{name: "304 with content-length", raw: "HTTP/1.1 304 Not Modified\r\nContent-Length: 50\r\n\r\n", status: 304},
	{name: "100 continue", raw: continueHead + "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
		status: 200, body: "ok", headerBytes: len(continueHead) + len("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n")},
	{name: "103 then 100 then 404", raw: earlyHints + continueHead + "HTTP/1.1 404 Not Found\r\nContent-Length: 1\r\n\r\nx",
		status: 404, body: "x"},
	{name: "bare LF", raw: "HTTP/1.1 200 OK\nContent-Length: 2\n\nok", status: 200, body: "ok"},
	{name: "no reason phrase", raw: "HTTP/1.1 404\r\nContent-Length: 0\r\n\r\n", status: 404},
	{name: "obs-fold ignored", raw: "HTTP/1.1 200 OK\r\nX-Long: a\r\n  b\r\nContent-Length: 1\r\n\r\nx", status: 200, body: "x"},
	{name: "request asked for close", reqClose: true, raw: "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx", status: 200, body: "x", close: true},

	{name: "bad protocol name", raw: "HTTX/1.1 200 OK\r\n\r\n", err: ErrProtocol},
	{name: "HTTP/2 status line", raw: "HTTP/2 200 OK\r\n\r\n", err: ErrProtocol},
	{name: "short status code", raw: "HTTP/1.1 20 OK\r\n\r\n", err: ErrProtocol},
	{name: "non-digit status", raw: "HTTP/1.1 2x0 OK\r\n\r\n", err: ErrProtocol},
	{name: "no space after status", raw: "HTTP/1.1 200OK\r\n\r\n", err: ErrProtocol},
	{name: "status below 100", raw: "HTTP/1.1 099 Odd\r\n\r\n", err: ErrProtocol},
	{name: "garbage", raw: "garbage\r\n\r\n", err: ErrProtocol},
	{name: "field without colon", raw: "HTTP/1.1 200 OK\r\nNoColon\r\n\r\n", err: ErrProtocol},
	{name: "space before colon", raw: "HTTP/1.1 200 OK\r\nContent-Length : 5\r\n\r\nhello", err: ErrProtocol},
	{name: "bad content-length", raw: "HTTP/1.1 200 OK\r\nContent-Length: 5x\r\n\r\nhello", err: ErrProtocol},
	{name: "negative content-length", raw: "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", err: ErrProtocol},
	{name: "conflicting content-length", raw: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello", err: ErrProtocol},
	{name: "bad chunk size", raw: chunkedHead + "zz\r\n", err: ErrProtocol},
	{name: "chunk size overflow", raw: chunkedHead + "fffffffffffffffff\r\n", err: ErrProtocol},
	{name: "chunk without CRLF", raw: chunkedHead + "5\r\nhelloXX\r\n0\r\n\r\n", err: ErrProtocol},
	{name: "101", raw: "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n", err: ErrProtocol},
	{name: "oversized header line", raw: "HTTP/1.1 200 OK\r\nX-Big: " + strings.Repeat("a", 70<<10) + "\r\n\r\n", err: ErrProtocol, whole: true},
	{name: "oversized header block", raw: "HTTP/1.1 200 OK\r\n" + strings.Repeat("X-Many: "+strings.Repeat("b", 90)+"\r\n", 1000) + "\r\n",
		err: ErrProtocol, whole: true},
	{name: "oversized trailer", raw: chunkedHead + "0\r\n" + strings.Repeat("X-T: "+strings.Repeat("c", 95)+"\r\n", 1000) + "\r\n",
		err: ErrProtocol, whole: true},

	{name: "nothing before close", raw: "", err: io.EOF},
	{name: "truncated status line", raw: "HTTP/1.1 20", err: io.ErrUnexpectedEOF},
	{name: "truncated header", raw: "HTTP/1.1 200 OK\r\nContent-Le", err: io.ErrUnexpectedEOF},
	{name: "truncated body", raw: "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello", err: io.ErrUnexpectedEOF},
	{name: "truncated chunk", raw: chunkedHead + "5\r\nhel", err: io.ErrUnexpectedEOF},
	{name: "truncated trailer", raw: chunkedHead + "0\r\nX-T: 1\r\n", err: io.ErrUnexpectedEOF},
}

// runRespCase sends one request over a pipe whose peer answers with the
// given pieces and then closes, and checks the parsed response.
func runRespCase(t *testing.T, tc respCase, pieces []string, keepBody bool, mode string) {
	t.Helper()
	c, stop := startPipe(func(s net.Conn) {
		buf := make([]byte, 4096)
		if _, err := readHead(s, buf, 0); err != nil {
			return
		}
		for _, p := range pieces {
			if _, err := io.WriteString(s, p); err != nil {
				return
			}
		}
	})
	defer stop()
	method := tc.method
	if method == "" {
		method = "GET"
	}
	req := NewRequest(method, "example.test", "/", nil, nil, !tc.reqClose)
	resp := Response{KeepBody: keepBody, Body: []byte("stale")}
	err := c.Do(req, &resp, time.Now().Add(10*time.Second))
	if tc.err != nil {
		if !errors.Is(err, tc.err) {
			t.Fatalf("%s: err = %v, want %v", mode, err, tc.err)
		}
		return
	}
	if err != nil {
		t.Fatalf("%s: unexpected error: %v", mode, err)
	}
	wantBody := ""
	if keepBody {
		wantBody = tc.body
	}
	wire := tc.wireBytes
	if wire == 0 {
		wire = len(tc.raw)
	}
	switch {
	case resp.Status != tc.status:
		t.Fatalf("%s: status = %d, want %d", mode, resp.Status, tc.status)
	case string(resp.Body) != wantBody:
		t.Fatalf("%s: body = %q, want %q", mode, resp.Body, wantBody)
	case resp.BodyBytes != int64(len(tc.body)):
		t.Fatalf("%s: BodyBytes = %d, want %d", mode, resp.BodyBytes, len(tc.body))
	case resp.WireBytes != int64(wire):
		t.Fatalf("%s: WireBytes = %d, want %d", mode, resp.WireBytes, wire)
	case tc.headerBytes > 0 && resp.HeaderBytes != int64(tc.headerBytes):
		t.Fatalf("%s: HeaderBytes = %d, want %d", mode, resp.HeaderBytes, tc.headerBytes)
	case resp.Close != tc.close:
		t.Fatalf("%s: Close = %v, want %v", mode, resp.Close, tc.close)
	}
}

// TestResponseParsing replays every case whole, byte by byte, and split in
// two at every offset.
func TestResponseParsing(t *testing.T) {
	for _, tc := range respCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			runRespCase(t, tc, []string{tc.raw}, true, "whole")
			runRespCase(t, tc, []string{tc.raw}, false, "whole, body discarded")
			if tc.whole {
				return
			}
			bytewise := make([]string, len(tc.raw))
			for i := range tc.raw {
				bytewise[i] = tc.raw[i : i+1]
			}
			runRespCase(t, tc, bytewise, true, "byte by byte")
			for i := 1; i < len(tc.raw); i++ {
				runRespCase(t, tc, []string{tc.raw[:i], tc.raw[i:]}, i%2 == 0, fmt.Sprintf("split at %d", i))
			}
		})
	}
}

// TestConnSequence runs differently framed responses over one connection,
// byte by byte, so parser state must carry over correctly between them.
func TestConnSequence(t *testing.T) {
	type step struct {
		method, raw, body string
		status            int
	}
	steps := []step{
		{"HEAD", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", "", 200},
		{"GET", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", "hello", 200},
		{"GET", chunkedHead + chunkedBody + chunkedTrail, "hello world0123456789", 200},
		{"POST", continueHead + "HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok", "ok", 201},
		{"GET", "HTTP/1.1 304 Not Modified\r\nContent-Length: 9\r\n\r\n", "", 304},
		{"GET", "HTTP/1.1 200 OK\nContent-Length: 3\n\nend", "end", 200},
	}
	c := pipeConn(t, func(s net.Conn) {
		buf := make([]byte, 4096)
		have := 0
		for _, st := range steps {
			var err error
			if have, err = readHead(s, buf, have); err != nil {
				return
			}
			for i := range len(st.raw) {
				if _, err := s.Write([]byte{st.raw[i]}); err != nil {
					return
				}
			}
		}
	})
	resp := Response{KeepBody: true}
	for i, st := range steps {
		req := NewRequest(st.method, "example.test", "/", nil, nil, true)
		if err := c.Do(req, &resp, time.Now().Add(10*time.Second)); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if resp.Status != st.status || string(resp.Body) != st.body || resp.Close {
			t.Fatalf("step %d: got %d %q close=%v, want %d %q", i, resp.Status, resp.Body, resp.Close, st.status, st.body)
		}
	}
}

// TestTCPByteByByte writes responses one byte per TCP segment.
func TestTCPByteByByte(t *testing.T) {
	raw := chunkedHead + chunkedBody + chunkedTrail
	srv := newRawServer(t, func(_ int64, c net.Conn) {
		buf := make([]byte, 4096)
		have := 0
		for {
			var err error
			if have, err = readHead(c, buf, have); err != nil {
				return
			}
			for i := range len(raw) {
				if _, err := c.Write([]byte{raw[i]}); err != nil {
					return
				}
			}
		}
	})
	ctx := context.Background()
	c, err := Dial(ctx, "tcp", srv.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	req := NewRequest("GET", "example.test", "/", nil, nil, true)
	resp := Response{KeepBody: true}
	for i := range 3 {
		if err := c.Do(req, &resp, time.Now().Add(10*time.Second)); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if resp.Status != 200 || string(resp.Body) != "hello world0123456789" || resp.WireBytes != int64(len(raw)) {
			t.Fatalf("request %d: got %d %q wire=%d", i, resp.Status, resp.Body, resp.WireBytes)
		}
	}
}

// TestPipelinedDataNotConsumed checks that bytes after a response's end
// stay for the next call: a complete response is returned by it, garbage
// makes it fail instead of being swallowed into a body.
func TestPipelinedDataNotConsumed(t *testing.T) {
	second := "HTTP/1.1 202 Accepted\r\nContent-Length: 3\r\n\r\nTWO"
	c := pipeConn(t, func(s net.Conn) {
		buf := make([]byte, 4096)
		have, err := readHead(s, buf, 0)
		if err != nil {
			return
		}
		if _, err := io.WriteString(s, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"+second+"GARBAGE\r\n\r\n"); err != nil {
			return
		}
		for {
			if have, err = readHead(s, buf, have); err != nil {
				return
			}
		}
	})
	req := NewRequest("GET", "example.test", "/", nil, nil, true)
	resp := Response{KeepBody: true}
	if err := c.Do(req, &resp, time.Now().Add(10*time.Second)); err != nil {
		t.Fatal(err)
	}
	if resp.Status != 200 || string(resp.Body) != "hello" || resp.BodyBytes != 5 {
		t.Fatalf("first: got %d %q (%d bytes)", resp.Status, resp.Body, resp.BodyBytes)
	}
	if err := c.Do(req, &resp, time.Now().Add(10*time.Second)); err != nil {
		t.Fatal(err)
	}
	if resp.Status != 202 || string(resp.Body) != "TWO" || resp.WireBytes != int64(len(second)) {
		t.Fatalf("second: got %d %q (%d wire bytes)", resp.Status, resp.Body, resp.WireBytes)
	}
	if err := c.Do(req, &resp, time.Now().Add(10*time.Second)); !errors.Is(err, ErrProtocol) {
		t.Fatalf("third: err = %v, want ErrProtocol", err)
	}
	if err := c.Do(req, &resp, time.Now().Add(10*time.Second)); err == nil {
		t.Fatal("Conn usable after a protocol error")
	}
}

// TestLargeBody exercises buffer growth and direct discard for a body much
// larger than the read buffer.
func TestLargeBody(t *testing.T) {
	body := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB
	raw := append([]byte(fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", len(body))), body...)
	srv := newRawServer(t, func(_ int64, c net.Conn) { serveFixed(c, raw) })
	c, err := Dial(context.Background(), "tcp", srv.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	req := NewRequest("GET", "example.test", "/", nil, nil, true)
	for _, keep := range []bool{false, true, false} {
		resp := Response{KeepBody: keep}
		if err := c.Do(req, &resp, time.Now().Add(10*time.Second)); err != nil {
			t.Fatal(err)
		}
		if resp.BodyBytes != int64(len(body)) || resp.WireBytes != int64(len(raw)) {
			t.Fatalf("keep=%v: BodyBytes=%d WireBytes=%d", keep, resp.BodyBytes, resp.WireBytes)
		}
		if keep && !bytes.Equal(resp.Body, body) {
			t.Fatalf("kept body differs")
		}
	}
}

func TestNewRequestEncoding(t *testing.T) {
	tests := []struct {
		name      string
		method    string
		uri       string
		headers   [][2]string
		body      []byte
		keepAlive bool
		want      string
	}{
		{"defaults", "", "", nil, nil, true, "GET / HTTP/1.1\r\nHost: example.test\r\n\r\n"},
		{"close", "GET", "/a?b=c", nil, nil, false, "GET /a?b=c HTTP/1.1\r\nHost: example.test\r\nConnection: close\r\n\r\n"},
		{"user headers and host", "GET", "/", [][2]string{{"X-A", "1"}, {"host", "other.test"}}, nil, true,
			"GET / HTTP/1.1\r\nX-A: 1\r\nhost: other.test\r\n\r\n"},
		{"user connection header", "GET", "/", [][2]string{{"Connection", "keep-alive"}}, nil, false,
			"GET / HTTP/1.1\r\nHost: example.test\r\nConnection: keep-alive\r\n\r\n"},
		{"post body", "POST", "/p", nil, []byte("abc"), true, "POST /p HTTP/1.1\r\nHost: example.test\r\nContent-Length: 3\r\n\r\nabc"},
		{"post empty body", "POST", "/p", nil, []byte{}, true, "POST /p HTTP/1.1\r\nHost: example.test\r\nContent-Length: 0\r\n\r\n"},
		{"put empty body", "PUT", "/p", nil, []byte{}, true, "PUT /p HTTP/1.1\r\nHost: example.test\r\nContent-Length: 0\r\n\r\n"},
		{"get empty body", "GET", "/", nil, []byte{}, true, "GET / HTTP/1.1\r\nHost: example.test\r\n\r\n"},
		{"post nil body", "POST", "/", nil, nil, true, "POST / HTTP/1.1\r\nHost: example.test\r\n\r\n"},
		{"user content-length", "POST", "/", [][2]string{{"Content-Length", "2"}}, []byte("ab"), true,
			"POST / HTTP/1.1\r\nHost: example.test\r\nContent-Length: 2\r\n\r\nab"},
	}
	for _, tt := range tests {
		r := NewRequest(tt.method, "example.test", tt.uri, tt.headers, tt.body, tt.keepAlive)
		if got := string(r.Bytes()); got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
		if r.Len() != len(tt.want) {
			t.Errorf("%s: Len = %d, want %d", tt.name, r.Len(), len(tt.want))
		}
	}
	if r := NewRequest("GET", "h", "/", [][2]string{{"Connection", "close"}}, nil, true); r.keepAlive {
		t.Error("a user Connection: close header must make the request non-keep-alive")
	}
}
