package fcgi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"net/http"
	httpfcgi "net/http/fcgi"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

var bigBody = pattern(1 << 20)

func testMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		env := httpfcgi.ProcessEnv(r)
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintf(w, "method=%s\nquery=%s\nxfoo=%s\nctype=%s\nclen=%d\nscript=%s\ndocroot=%s\nbodylen=%d\nbodycrc=%08x\n",
			r.Method, r.URL.RawQuery, r.Header.Get("X-Foo"), r.Header.Get("Content-Type"), r.ContentLength,
			env["SCRIPT_FILENAME"], env["DOCUMENT_ROOT"], len(body), crc32.ChecksumIEEE(body))
	})
	mux.HandleFunc("/missing", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no such page", http.StatusNotFound)
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Write(bigBody)
	})
	mux.HandleFunc("/status", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"pool":"www","query":%q}`, r.URL.RawQuery)
	})
	return mux
}

func dialT(t *testing.T, network, addr string) *Conn {
	t.Helper()
	c, err := Dial(context.Background(), network, addr)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestRoundTripNetHTTPFCGI(t *testing.T) {
	for _, network := range networks {
		t.Run(network, func(t *testing.T) {
			addr, _ := startHTTPFCGI(t, network, testMux())
			c := dialT(t, network, addr)
			deadline := func() time.Time { return time.Now().Add(10 * time.Second) }

			t.Run("GET with query and params", func(t *testing.T) {
				req := NewRequest(testParams("/echo", "a=1&b=two", []Param{{"X-Foo", "bar"}}, 0), nil)
				resp := Response{KeepBody: true}
				if err := c.Do(req, &resp, deadline()); err != nil {
					t.Fatal(err)
				}
				got := lines(resp.Body)
				want := map[string]string{"method": "GET", "query": "a=1&b=two", "xfoo": "bar", "ctype": "",
					"clen": "0", "script": "/srv/app/echo", "docroot": "/srv/app", "bodylen": "0"}
				for k, v := range want {
					if got[k] != v {
						t.Errorf("%s = %q, want %q (body %q)", k, got[k], v, resp.Body)
					}
				}
				if resp.Status != 200 || resp.ProtocolStatus != 0 || resp.BodyBytes != int64(len(resp.Body)) || resp.HeaderBytes == 0 {
					t.Errorf("resp = %+v", resp)
				}
			})

			t.Run("POST body over 64 KiB", func(t *testing.T) {
				body := pattern(200 << 10)
				hdr := []Param{{"Content-Type", "application/x-www-form-urlencoded"}, {"X-Foo", "post"}}
				req := NewRequest(testParams("/echo", "", hdr, len(body)), body)
				resp := Response{KeepBody: true}
				if err := c.Do(req, &resp, deadline()); err != nil {
					t.Fatal(err)
				}
				got := lines(resp.Body)
				want := map[string]string{"method": "POST", "xfoo": "post", "ctype": "application/x-www-form-urlencoded",
					"clen": fmt.Sprint(len(body)), "bodylen": fmt.Sprint(len(body)),
					"bodycrc": fmt.Sprintf("%08x", crc32.ChecksumIEEE(body))}
				for k, v := range want {
					if got[k] != v {
						t.Errorf("%s = %q, want %q", k, got[k], v)
					}
				}
			})

			t.Run("404", func(t *testing.T) {
				var resp Response
				if err := c.Do(NewRequest(testParams("/missing", "", nil, 0), nil), &resp, deadline()); err != nil {
					t.Fatal(err)
				}
				if resp.Status != 404 || resp.BodyBytes != int64(len("no such page\n")) {
					t.Errorf("Status %d BodyBytes %d, want 404 and %d", resp.Status, resp.BodyBytes, len("no such page\n"))
				}
			})

			t.Run("1 MiB kept and discarded", func(t *testing.T) {
				req := NewRequest(testParams("/big", "", nil, 0), nil)
				resp := Response{KeepBody: true}
				if err := c.Do(req, &resp, deadline()); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(resp.Body, bigBody) || resp.BodyBytes != int64(len(bigBody)) {
					t.Fatalf("kept body: %d bytes (BodyBytes %d), equal %v", len(resp.Body), resp.BodyBytes, bytes.Equal(resp.Body, bigBody))
				}
				kept := resp.HeaderBytes
				resp.KeepBody = false
				if err := c.Do(req, &resp, deadline()); err != nil {
					t.Fatal(err)
				}
				if len(resp.Body) != 0 || resp.BodyBytes != int64(len(bigBody)) || resp.HeaderBytes != kept {
					t.Fatalf("discarded: len(Body) %d BodyBytes %d HeaderBytes %d (kept run %d)", len(resp.Body), resp.BodyBytes, resp.HeaderBytes, kept)
				}
			})
		})
	}
}

func TestKeepConnManyRequests(t *testing.T) {
	for _, network := range networks {
		t.Run(network, func(t *testing.T) {
			addr, l := startHTTPFCGI(t, network, testMux())
			c := dialT(t, network, addr)
			req := NewRequest(testParams("/echo", "n=1", nil, 0), nil)
			var resp Response
			for i := 0; i < 300; i++ {
				if err := c.Do(req, &resp, time.Time{}); err != nil {
					t.Fatalf("request %d: %v", i, err)
				}
				if resp.Status != 200 || resp.BodyBytes == 0 {
					t.Fatalf("request %d: %+v", i, resp)
				}
			}
			if n := l.accepts.Load(); n != 1 {
				t.Errorf("server accepted %d connections, want 1", n)
			}
		})
	}
}

func TestClientRedialsWhenServerCloses(t *testing.T) {
	stdout := []byte("Content-Type: text/plain\r\n\r\nhello")
	for _, network := range networks {
		t.Run(network, func(t *testing.T) {
			// Like a server that ignores FCGI_KEEP_CONN: one response, then close.
			addr, l := startRaw(t, network, func(c net.Conn) {
				if err := readRequest(c, make([]byte, 1<<16), nil, nil); err != nil {
					return
				}
				c.Write(reply(stdout, nil, 1000, 0, 0))
			})
			cl := NewClient(network, addr, time.Second)
			defer cl.Close()
			req := NewRequest(testParams("/x", "", nil, 0), nil)
			resp := Response{KeepBody: true}
			const n = 20
			for i := 0; i < n; i++ {
				if err := cl.Do(context.Background(), req, &resp, time.Now().Add(5*time.Second)); err != nil {
					t.Fatalf("request %d: %v", i, err)
				}
				if string(resp.Body) != "hello" {
					t.Fatalf("request %d: body %q", i, resp.Body)
				}
			}
			if got := cl.Reconnects(); got != n-1 {
				t.Errorf("Reconnects() = %d, want %d", got, n-1)
			}
			if got := l.accepts.Load(); got != n {
				t.Errorf("server accepted %d connections, want %d", got, n)
			}
		})
	}
}

func TestFreshConnectionFailureIsNotRetried(t *testing.T) {
	for _, network := range networks {
		t.Run(network, func(t *testing.T) {
			addr, l := startRaw(t, network, func(c net.Conn) {}) // closes at once
			cl := NewClient(network, addr, time.Second)
			defer cl.Close()
			var resp Response
			err := cl.Do(context.Background(), NewRequest(testParams("/x", "", nil, 0), nil), &resp, time.Now().Add(5*time.Second))
			if err == nil {
				t.Fatal("Do succeeded against a server that closes every connection")
			}
			if errors.Is(err, ErrConnect) || errors.Is(err, ErrProtocol) {
				t.Errorf("err = %v, want a plain I/O error", err)
			}
			if got := l.accepts.Load(); got != 1 {
				t.Errorf("server accepted %d connections, want 1 (no retry on a fresh connection)", got)
			}
			if cl.Reconnects() != 0 {
				t.Errorf("Reconnects() = %d, want 0", cl.Reconnects())
			}
		})
	}
}

func TestConnectErrors(t *testing.T) {
	l := listen(t, "tcp")
	tcpAddr := l.Addr().String()
	l.Close()
	cases := []struct{ network, addr string }{
		{"tcp", tcpAddr},
		{"unix", t.TempDir() + "/missing.sock"},
		{"udp", "127.0.0.1:9"},
	}
	for _, tc := range cases {
		_, err := Dial(context.Background(), tc.network, tc.addr)
		if !errors.Is(err, ErrConnect) {
			t.Errorf("Dial(%s, %s) = %v, want ErrConnect", tc.network, tc.addr, err)
		}
		cl := NewClient(tc.network, tc.addr, time.Second)
		var resp Response
		err = cl.Do(context.Background(), NewRequest(nil, nil), &resp, time.Time{})
		if !errors.Is(err, ErrConnect) {
			t.Errorf("Client.Do(%s, %s) = %v, want ErrConnect", tc.network, tc.addr, err)
		}
		cl.Close()
	}
}

func TestProtocolErrors(t *testing.T) {
	stdout := record(typeStdout, requestID, []byte("Status: 200\r\n\r\nok"), 0)
	cases := map[string][]byte{
		"HTTP garbage":        []byte("HTTP/1.1 400 Bad Request\r\nServer: nginx\r\nContent-Length: 0\r\n\r\n"),
		"missing END_REQUEST": stdout,
		"unknown record type": append(slices.Clone(stdout), record(42, requestID, nil, 0)...),
		"wrong request ID":    record(typeStdout, 7, []byte("x"), 0),
		"short END_REQUEST":   append(slices.Clone(stdout), record(typeEndRequest, requestID, []byte{0, 0, 0, 0}, 0)...),
	}
	for name, out := range cases {
		t.Run(name, func(t *testing.T) {
			addr, _ := startRaw(t, "tcp", func(c net.Conn) {
				c.Write(out)
				// Drain the request so closing does not reset the connection.
				c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
				io.Copy(io.Discard, c)
			})
			cl := NewClient("tcp", addr, time.Second)
			defer cl.Close()
			var resp Response
			err := cl.Do(context.Background(), NewRequest(testParams("/x", "", nil, 0), nil), &resp, time.Now().Add(5*time.Second))
			if !errors.Is(err, ErrProtocol) {
				t.Fatalf("err = %v, want ErrProtocol", err)
			}
			t.Log(err)
		})
	}
}

func TestDeadline(t *testing.T) {
	for _, network := range networks {
		t.Run(network, func(t *testing.T) {
			addr, _ := startRaw(t, network, func(c net.Conn) { io.Copy(io.Discard, c) }) // never answers
			req := NewRequest(testParams("/x", "", nil, 0), nil)
			var resp Response
			const wait = 150 * time.Millisecond
			const slack = 300 * time.Millisecond

			c := dialT(t, network, addr)
			start := time.Now()
			err := c.Do(req, &resp, start.Add(wait))
			checkDeadline(t, "Conn.Do", err, time.Since(start), wait, slack)

			cl := NewClient(network, addr, time.Second)
			defer cl.Close()
			ctx, cancel := context.WithTimeout(context.Background(), wait)
			defer cancel()
			start = time.Now()
			err = cl.Do(ctx, req, &resp, time.Time{})
			checkDeadline(t, "Client.Do with ctx deadline", err, time.Since(start), wait, slack)
		})
	}
}

func checkDeadline(t *testing.T, what string, err error, took, wait, slack time.Duration) {
	t.Helper()
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("%s: err = %v, want os.ErrDeadlineExceeded", what, err)
	}
	if took < wait-10*time.Millisecond || took > wait+slack {
		t.Errorf("%s: returned after %v, want about %v", what, took, wait)
	}
}

func TestStderrAndEndRequest(t *testing.T) {
	stderr := pattern(10000)
	stdout := []byte("Status: 503 Service Unavailable\r\nContent-Type: text/html\r\n\r\n<h1>busy</h1>")
	out := reply(stdout, stderr, 4000, 7, StatusOverloaded)
	addr, _ := startRaw(t, "unix", func(c net.Conn) {
		scratch := make([]byte, 1<<16)
		for readRequest(c, scratch, nil, nil) == nil {
			c.Write(out)
		}
	})
	c := dialT(t, "unix", addr)
	resp := Response{KeepBody: true}
	for i := 0; i < 2; i++ { // the second run checks that Do resets resp
		if err := c.Do(NewRequest(nil, nil), &resp, time.Time{}); err != nil {
			t.Fatal(err)
		}
		if resp.StderrBytes != int64(len(stderr)) || !bytes.Equal(resp.Stderr, stderr[:DefaultStderrKeep]) {
			t.Errorf("StderrBytes %d, len(Stderr) %d", resp.StderrBytes, len(resp.Stderr))
		}
		if resp.ProtocolStatus != StatusOverloaded || resp.AppStatus != 7 || resp.Status != 503 {
			t.Errorf("ProtocolStatus %d AppStatus %d Status %d", resp.ProtocolStatus, resp.AppStatus, resp.Status)
		}
		if string(resp.Body) != "<h1>busy</h1>" || resp.HeaderBytes != int64(len(stdout)-len("<h1>busy</h1>")) {
			t.Errorf("Body %q HeaderBytes %d", resp.Body, resp.HeaderBytes)
		}
	}
}

// TestByteAtATime checks that records and headers split across reads, odd
// padding and management records parse the same as a single write.
func TestByteAtATime(t *testing.T) {
	stdout := append([]byte("X-Powered-By: PHP/8.2\nStatus: 201 Created\nContent-Type: text/plain\n\n"), pattern(3000)...)
	out := append(record(typeUnknownType, 0, make([]byte, 8), 0), reply(stdout, []byte("PHP Warning: x"), 700, 3, 0)...)
	for _, network := range networks {
		t.Run(network, func(t *testing.T) {
			var want Response
			for _, split := range []bool{false, true} {
				addr, _ := startRaw(t, network, func(c net.Conn) {
					if tc, ok := c.(*net.TCPConn); ok {
						tc.SetNoDelay(true)
					}
					if readRequest(c, make([]byte, 1<<16), nil, nil) != nil {
						return
					}
					if !split {
						c.Write(out)
						return
					}
					for i := range out {
						if _, err := c.Write(out[i : i+1]); err != nil {
							return
						}
					}
				})
				c := dialT(t, network, addr)
				resp := Response{KeepBody: true}
				if err := c.Do(NewRequest(nil, nil), &resp, time.Now().Add(10*time.Second)); err != nil {
					t.Fatal(err)
				}
				if !split {
					want = resp
					want.Body = slices.Clone(resp.Body)
					if want.Status != 201 || want.AppStatus != 3 || !bytes.Equal(want.Body, stdout[len(stdout)-3000:]) {
						t.Fatalf("whole write parsed wrong: %+v", want)
					}
					continue
				}
				if !reflect.DeepEqual(resp, want) {
					t.Errorf("byte-at-a-time parse differs:\n got %+v\nwant %+v", resp, want)
				}
			}
		})
	}
}

func TestHeaderParsing(t *testing.T) {
	cases := []struct {
		name, out       string
		status          int
		header, bodyLen int
	}{
		{"no status crlf", "Content-Type: text/html\r\n\r\nbody", 200, 27, 4},
		{"no status lf", "Content-Type: text/html\n\nbody", 200, 25, 4},
		{"status crlf", "X-A: b\r\nStatus: 404 Not Found\r\n\r\nnope", 404, 33, 4},
		{"status lf lower case", "status:302\nLocation: /\n\n", 302, 24, 0},
		{"status no reason", "Status: 500\r\n\r\n", 500, 15, 0},
		{"no terminator", "Status: 404 Not Found\r\nContent-Type: text/html\r\n", 404, 48, 0},
		{"no terminator no status", "just some text", 200, 14, 0},
		{"malformed status", "Status: abc\r\n\r\nx", 200, 15, 1},
		{"body has blank lines", "A: b\n\nline\n\nline\r\n\r\n", 200, 6, 14},
		{"long header line", "X-Long: " + strings.Repeat("z", 100) + "\r\nStatus: 418 Teapot\r\n\r\n", 418, 132, 0},
	}
	for _, tc := range cases {
		// Feed the stream cut at every position, as records would cut it.
		for cut := 0; cut <= len(tc.out); cut++ {
			r := Response{KeepBody: true}
			r.reset()
			r.stdout([]byte(tc.out[:cut]))
			r.stdout([]byte(tc.out[cut:]))
			if r.Status != tc.status || r.HeaderBytes != int64(tc.header) || r.BodyBytes != int64(tc.bodyLen) ||
				string(r.Body) != tc.out[tc.header:] {
				t.Errorf("%s cut at %d: Status %d HeaderBytes %d BodyBytes %d Body %q; want %d %d %d",
					tc.name, cut, r.Status, r.HeaderBytes, r.BodyBytes, r.Body, tc.status, tc.header, tc.bodyLen)
				break
			}
		}
	}
}

func TestNewRequestEncoding(t *testing.T) {
	params := []Param{{"SHORT", "v"}, {"EMPTY", ""}, {strings.Repeat("N", 200), strings.Repeat("v", 300)}}
	for i := 0; i < 5; i++ {
		params = append(params, Param{fmt.Sprintf("BIG_%d", i), strings.Repeat("x", 30000)})
	}
	params = append(params, Param{"HUGE", strings.Repeat("h", 70000)})
	body := pattern(3*maxContent + 17)
	wire := NewRequest(params, body).wire
	if len(wire)%8 != 0 {
		t.Errorf("wire length %d is not 8-aligned", len(wire))
	}

	var types []uint8
	var gotParams []Param
	var gotBody []byte
	for b := wire; len(b) > 0; {
		if len(b) < headerLen || b[0] != version1 || b[2] != 0 || b[3] != requestID {
			t.Fatalf("bad header % x", b[:min(8, len(b))])
		}
		n, p := int(b[4])<<8|int(b[5]), int(b[6])
		if n+p > 65535 || (n+p)%8 != 0 {
			t.Errorf("record type %d: content %d + padding %d", b[1], n, p)
		}
		content := b[headerLen : headerLen+n]
		types = append(types, b[1])
		switch b[1] {
		case typeBeginRequest:
			if !bytes.Equal(content, []byte{0, roleResponder, flagKeepConn, 0, 0, 0, 0, 0}) {
				t.Errorf("BEGIN_REQUEST body % x", content)
			}
		case typeParams:
			// Each record must hold whole pairs: php-fpm parses them one by one.
			ps, err := decodePairs(content)
			if err != nil {
				t.Fatalf("PARAMS record: %v", err)
			}
			gotParams = append(gotParams, ps...)
		case typeStdin:
			gotBody = append(gotBody, content...)
		}
		b = b[headerLen+n+p:]
	}
	wantTypes := []uint8{typeBeginRequest, typeParams, typeParams, typeParams, typeParams, typeParams, typeStdin, typeStdin, typeStdin, typeStdin, typeStdin}
	if !slices.Equal(types, wantTypes) {
		t.Errorf("record types %v, want %v", types, wantTypes)
	}
	want := slices.Clone(params)
	want[len(want)-1].Value = want[len(want)-1].Value[:maxContent-8-len("HUGE")]
	if !reflect.DeepEqual(gotParams, want) {
		t.Errorf("params do not round-trip (got %d, want %d)", len(gotParams), len(want))
	}
	if !bytes.Equal(gotBody, body) {
		t.Errorf("body does not round-trip")
	}
}

// TestParamsOnTheWire checks what a server receives from CGIParams through
// a real connection, including params net/http/fcgi hides.
func TestParamsOnTheWire(t *testing.T) {
	got := make(chan map[string]string, 1)
	addr, _ := startRaw(t, "tcp", func(c net.Conn) {
		var params, stdin []byte
		if readRequest(c, make([]byte, 1<<16), &params, &stdin) != nil {
			return
		}
		ps, err := decodePairs(params)
		if err != nil {
			t.Error(err)
		}
		m := paramMap(ps)
		m["<stdin>"] = string(stdin)
		got <- m
		c.Write(reply([]byte("\r\n"), nil, 100, 0, 0))
	})
	body := []byte("a=1&b=2")
	params := testParams("/index.php", "q=x", []Param{{"Content-Type", "application/x-www-form-urlencoded"}, {"X-Foo", "bar"}}, len(body))
	var resp Response
	cl := NewClient("tcp", addr, time.Second)
	defer cl.Close()
	if err := cl.Do(context.Background(), NewRequest(params, body), &resp, time.Now().Add(5*time.Second)); err != nil {
		t.Fatal(err)
	}
	m := <-got
	for k, v := range map[string]string{"SCRIPT_FILENAME": "/srv/app/index.php", "QUERY_STRING": "q=x", "HTTP_X_FOO": "bar",
		"CONTENT_TYPE": "application/x-www-form-urlencoded", "CONTENT_LENGTH": "7", "REQUEST_METHOD": "POST", "<stdin>": "a=1&b=2"} {
		if m[k] != v {
			t.Errorf("%s = %q, want %q", k, m[k], v)
		}
	}
	if resp.HeaderBytes != 2 || resp.BodyBytes != 0 {
		t.Errorf("HeaderBytes %d BodyBytes %d", resp.HeaderBytes, resp.BodyBytes)
	}
}

func TestCGIParams(t *testing.T) {
	got := CGIParams(CGIOptions{
		Method:         "POST",
		ScriptFilename: "/srv/app/public/index.php",
		QueryString:    "page=2",
		RemotePort:     51234,
		Headers: []Param{
			{"Host", "shop.example"},
			{"Content-Type", "application/json"},
			{"content-length", "99"},
			{"X-Forwarded-For", "10.0.0.1"},
			{"Cookie", "a=1"},
			{"Cookie", "b=2"},
		},
		BodyLen: 13,
	})
	want := []Param{
		{"SCRIPT_FILENAME", "/srv/app/public/index.php"},
		{"QUERY_STRING", "page=2"},
		{"REQUEST_METHOD", "POST"},
		{"CONTENT_TYPE", "application/json"},
		{"CONTENT_LENGTH", "13"},
		{"SCRIPT_NAME", "/index.php"},
		{"REQUEST_URI", "/index.php?page=2"},
		{"DOCUMENT_URI", "/index.php"},
		{"DOCUMENT_ROOT", "/srv/app/public"},
		{"SERVER_PROTOCOL", "HTTP/1.1"},
		{"REQUEST_SCHEME", "http"},
		{"GATEWAY_INTERFACE", "CGI/1.1"},
		{"SERVER_SOFTWARE", "phptune"},
		{"REMOTE_ADDR", "127.0.0.1"},
		{"REMOTE_PORT", "51234"},
		{"SERVER_ADDR", "127.0.0.1"},
		{"SERVER_PORT", "80"},
		{"SERVER_NAME", "localhost"},
		{"REDIRECT_STATUS", "200"},
		{"HTTP_HOST", "shop.example"},
		{"HTTP_X_FORWARDED_FOR", "10.0.0.1"},
		{"HTTP_COOKIE", "a=1; b=2"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("CGIParams:\n got %v\nwant %v", got, want)
	}

	// A GET without body sends empty CONTENT_* like nginx; explicit fields win.
	m := paramMap(CGIParams(CGIOptions{ScriptFilename: "/var/www/a.php", ScriptName: "/app/a.php", DocumentRoot: "/var/www", ServerPort: 8080}))
	for k, v := range map[string]string{"REQUEST_METHOD": "GET", "CONTENT_TYPE": "", "CONTENT_LENGTH": "", "SCRIPT_NAME": "/app/a.php",
		"REQUEST_URI": "/app/a.php", "DOCUMENT_ROOT": "/var/www", "SERVER_PORT": "8080", "QUERY_STRING": ""} {
		if got, ok := m[k]; !ok || got != v {
			t.Errorf("%s = %q (present %v), want %q", k, got, ok, v)
		}
	}
	if _, ok := m["HTTPS"]; ok {
		t.Error("HTTPS should be omitted")
	}
}

func TestGet(t *testing.T) {
	for _, network := range networks {
		t.Run(network, func(t *testing.T) {
			addr, _ := startHTTPFCGI(t, network, testMux())
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			status, body, stderr, err := Get(ctx, network, addr, StatusParams("/status", "json&full"))
			if err != nil || status != 200 || string(body) != `{"pool":"www","query":"json&full"}` || len(stderr) != 0 {
				t.Errorf("Get = %d, %q, %q, %v", status, body, stderr, err)
			}
			// Without SERVER_PROTOCOL net/http/fcgi answers 500 and explains on stderr.
			status, _, stderr, err = Get(ctx, network, addr, []Param{{"SCRIPT_NAME", "/status"}, {"REQUEST_METHOD", "GET"}})
			if err != nil || status != 500 || !strings.Contains(string(stderr), "SERVER_PROTOCOL") {
				t.Errorf("Get without SERVER_PROTOCOL = %d, stderr %q, %v", status, stderr, err)
			}
		})
	}
}

func TestGetCancel(t *testing.T) {
	addr, _ := startRaw(t, "unix", func(c net.Conn) { io.Copy(io.Discard, c) }) // never answers
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, _, _, err := Get(ctx, "unix", addr, StatusParams("/status", ""))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("cancelled Get took %v", took)
	}
}

func TestUseAfterClose(t *testing.T) {
	addr, _ := startHTTPFCGI(t, "unix", testMux())
	c := dialT(t, "unix", addr)
	c.Close()
	var resp Response
	if err := c.Do(NewRequest(nil, nil), &resp, time.Time{}); !errors.Is(err, ErrClosed) {
		t.Errorf("Conn.Do after Close = %v, want ErrClosed", err)
	}
	cl := NewClient("unix", addr, time.Second)
	if err := cl.Do(context.Background(), NewRequest(testParams("/echo", "", nil, 0), nil), &resp, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if err := cl.Close(); err != nil {
		t.Fatal(err)
	}
	if err := cl.Do(context.Background(), NewRequest(nil, nil), &resp, time.Time{}); !errors.Is(err, ErrClosed) {
		t.Errorf("Client.Do after Close = %v, want ErrClosed", err)
	}
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func TestClientExpiredContext(t *testing.T) {
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	cl := NewClient("unix", "/nonexistent.sock", time.Second)
	var resp Response
	err := cl.Do(ctx, NewRequest(nil, nil), &resp, time.Time{})
	if !errors.Is(err, os.ErrDeadlineExceeded) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want os.ErrDeadlineExceeded and context.DeadlineExceeded", err)
	}
}

func TestClientCancelInterruptsExchange(t *testing.T) {
	addr, _ := startRaw(t, "unix", func(c net.Conn) { io.Copy(io.Discard, c) }) // never answers
	cl := NewClient("unix", addr, time.Second)
	defer cl.Close()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	var resp Response
	err := cl.Do(ctx, NewRequest(testParams("/echo", "", nil, 0), nil), &resp, time.Now().Add(20*time.Second))
	if !errors.Is(err, context.Canceled) || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("err = %v, want context.Canceled (not a timeout)", err)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("cancelled Client.Do took %v", took)
	}
}
