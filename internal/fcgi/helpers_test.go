package fcgi

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	httpfcgi "net/http/fcgi"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestMain fails the run if goroutines outlive the tests: the client must
// not leak any, and every in-test server is shut down by its cleanup.
func TestMain(m *testing.M) {
	base := runtime.NumGoroutine()
	code := m.Run()
	if code == 0 {
		deadline := time.Now().Add(3 * time.Second)
		for runtime.NumGoroutine() > base && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if n := runtime.NumGoroutine(); n > base {
			buf := make([]byte, 1<<20)
			fmt.Fprintf(os.Stderr, "%d goroutines leaked:\n%s\n", n-base, buf[:runtime.Stack(buf, true)])
			code = 1
		}
	}
	os.Exit(code)
}

var networks = []string{"tcp", "unix"}

func listen(t testing.TB, network string) net.Listener {
	t.Helper()
	addr := "127.0.0.1:0"
	if network == "unix" {
		addr = filepath.Join(t.TempDir(), "fcgi.sock")
	}
	l, err := net.Listen(network, addr)
	if err != nil {
		t.Fatalf("listen %s: %v", network, err)
	}
	return l
}

// countingListener counts accepted connections.
type countingListener struct {
	net.Listener
	accepts atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.accepts.Add(1)
	}
	return c, err
}

// startHTTPFCGI serves h with net/http/fcgi and returns the address and the
// accept counter. Connections close when the client closes them.
func startHTTPFCGI(t testing.TB, network string, h http.Handler) (string, *countingListener) {
	t.Helper()
	l := &countingListener{Listener: listen(t, network)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = httpfcgi.Serve(l, h)
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
	})
	return l.Addr().String(), l
}

// startRaw runs handle on every accepted connection. Cleanup closes the
// listener and all connections and waits for the handlers.
func startRaw(t testing.TB, network string, handle func(c net.Conn)) (string, *countingListener) {
	t.Helper()
	l := &countingListener{Listener: listen(t, network)}
	var (
		mu    sync.Mutex
		conns []net.Conn
		wg    sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				handle(c)
			}()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return l.Addr().String(), l
}

// readRequest reads one FastCGI request up to its empty STDIN record. With
// nil params and stdin it allocates nothing, so the zero-allocation test can
// use it as its peer.
func readRequest(r io.Reader, scratch []byte, params, stdin *[]byte) error {
	for {
		// The header lives in scratch: a local array would escape through
		// the io.Reader and allocate.
		h := scratch[:headerLen]
		if _, err := io.ReadFull(r, h); err != nil {
			return err
		}
		if h[0] != version1 {
			return errors.New("bad version")
		}
		typ := h[1]
		content := int(binary.BigEndian.Uint16(h[4:]))
		n := content + int(h[6])
		if _, err := io.ReadFull(r, scratch[:n]); err != nil {
			return err
		}
		switch typ {
		case typeParams:
			if params != nil {
				*params = append(*params, scratch[:content]...)
			}
		case typeStdin:
			if content == 0 {
				return nil
			}
			if stdin != nil {
				*stdin = append(*stdin, scratch[:content]...)
			}
		}
	}
}

// decodePairs decodes FastCGI name-value pairs.
func decodePairs(b []byte) ([]Param, error) {
	var out []Param
	readLen := func() (int, error) {
		if len(b) == 0 {
			return 0, errors.New("short pair")
		}
		if b[0] < 128 {
			n := int(b[0])
			b = b[1:]
			return n, nil
		}
		if len(b) < 4 {
			return 0, errors.New("short length")
		}
		n := int(binary.BigEndian.Uint32(b) &^ (1 << 31))
		b = b[4:]
		return n, nil
	}
	for len(b) > 0 {
		nl, err := readLen()
		if err != nil {
			return nil, err
		}
		vl, err := readLen()
		if err != nil {
			return nil, err
		}
		if len(b) < nl+vl {
			return nil, errors.New("pair overruns record")
		}
		out = append(out, Param{string(b[:nl]), string(b[nl : nl+vl])})
		b = b[nl+vl:]
	}
	return out, nil
}

func paramMap(ps []Param) map[string]string {
	m := make(map[string]string, len(ps))
	for _, p := range ps {
		m[p.Name] = p.Value
	}
	return m
}

// record encodes one record with the given padding length (any 0-255).
func record(typ uint8, id uint16, content []byte, padding int) []byte {
	b := make([]byte, headerLen, headerLen+len(content)+padding)
	b[0] = version1
	b[1] = typ
	binary.BigEndian.PutUint16(b[2:], id)
	binary.BigEndian.PutUint16(b[4:], uint16(len(content)))
	b[6] = uint8(padding)
	b = append(b, content...)
	return append(b, make([]byte, padding)...)
}

// reply encodes a response: stderr then stdout, each cut into records of at
// most chunk bytes with odd padding, then END_REQUEST.
func reply(stdout, stderr []byte, chunk int, appStatus uint32, protocolStatus uint8) []byte {
	var b []byte
	for i, s := range [][]byte{stderr, stdout} {
		typ := uint8(typeStderr)
		if i == 1 {
			typ = typeStdout
		}
		for k := 0; len(s) > 0; k++ {
			n := min(chunk, len(s))
			b = append(b, record(typ, requestID, s[:n], k%5)...)
			s = s[n:]
		}
	}
	b = append(b, record(typeStdout, requestID, nil, 0)...)
	end := make([]byte, 8)
	binary.BigEndian.PutUint32(end, appStatus)
	end[4] = protocolStatus
	return append(b, record(typeEndRequest, requestID, end, 0)...)
}

// pattern returns n deterministic, non-repeating-looking bytes.
func pattern(n int) []byte {
	b := make([]byte, n)
	x := uint32(2463534242)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}

func testParams(script, query string, headers []Param, bodyLen int) []Param {
	return CGIParams(CGIOptions{
		Method:         map[bool]string{true: "POST", false: "GET"}[bodyLen > 0],
		ScriptFilename: "/srv/app" + script,
		QueryString:    query,
		Headers:        headers,
		BodyLen:        bodyLen,
	})
}

func lines(b []byte) map[string]string {
	m := map[string]string{}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			m[k] = v
		}
	}
	return m
}
