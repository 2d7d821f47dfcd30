package load

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/fcgi"
	"github.com/phptune/phptune/internal/http1"
)

// Request is what every connection sends.
type Request struct {
	Method    string
	Headers   [][2]string
	Body      []byte
	KeepAlive bool // HTTP keep-alive; FastCGI connections are always kept (FCGI_KEEP_CONN)
}

// outcome is one response, reused per connection.
type outcome struct {
	status      int
	bytes       int64
	stderrBytes int64
	stderr      []byte
	fcgiStatus  uint8
	body        []byte
}

// client is one connection of the generator; not safe for concurrent use. do sends request i of the mix.
type client interface {
	do(ctx context.Context, deadline time.Time, o *outcome, i int) error
	reconnects() int64
	close() error
}

// newClientFactory pre-encodes the requests once (one per entry of the mix); each call of the factory makes
// one connection's client.
func newClientFactory(o *Options, keepBody bool, dialTimeout time.Duration) func() client {
	t := o.Target
	targets, reqs := []Target{t}, []Request{o.Request}
	if len(o.Mix) > 0 {
		targets, reqs = targets[:0], reqs[:0]
		for i, m := range o.Mix {
			tm := t
			tm.RequestURI = m.URI
			if t.Protocol == FastCGI {
				// The front controller routes on REQUEST_URI; QUERY_STRING follows it.
				_, tm.Query, _ = strings.Cut(m.URI, "?")
			}
			targets, reqs = append(targets, tm), append(reqs, o.RequestOf(i))
		}
	}
	switch t.Protocol {
	case HTTP:
		enc := make([]*http1.Request, len(targets))
		for i, tm := range targets {
			r := reqs[i]
			enc[i] = http1.NewRequest(r.Method, tm.Host, tm.RequestURI, r.Headers, r.Body, r.KeepAlive)
		}
		return func() client {
			return &httpClient{c: http1.NewClient(t.Network, t.Address, dialTimeout), reqs: enc, resp: http1.Response{KeepBody: keepBody}}
		}
	default:
		enc := make([]*fcgi.Request, len(targets))
		for i, tm := range targets {
			enc[i] = fcgi.NewRequest(FastCGIParams(tm, reqs[i]), reqs[i].Body)
		}
		return func() client {
			return &fcgiClient{c: fcgi.NewClient(t.Network, t.Address, dialTimeout), reqs: enc, resp: fcgi.Response{KeepBody: keepBody}}
		}
	}
}

// FastCGIParams are the CGI params a web server would send for this target and request.
func FastCGIParams(t Target, r Request) []fcgi.Param {
	var hdrs []fcgi.Param
	for _, h := range r.Headers {
		hdrs = append(hdrs, fcgi.Param{Name: h[0], Value: h[1]})
	}
	port := 0
	if t.Network == "tcp" {
		if _, p, ok := cutLast(t.Address, ":"); ok {
			port, _ = strconv.Atoi(p)
		}
	}
	return fcgi.CGIParams(fcgi.CGIOptions{
		Method:         r.Method,
		ScriptFilename: t.Script,
		DocumentRoot:   t.DocumentRoot,
		ScriptName:     t.ScriptName,
		RequestURI:     t.RequestURI,
		QueryString:    t.Query,
		ServerPort:     port,
		Headers:        hdrs,
		BodyLen:        len(r.Body),
	})
}

func cutLast(s, sep string) (before, after string, found bool) {
	for i := len(s) - len(sep); i >= 0; i-- {
		if s[i:i+len(sep)] == sep {
			return s[:i], s[i+len(sep):], true
		}
	}
	return s, "", false
}

type httpClient struct {
	c    *http1.Client
	reqs []*http1.Request
	resp http1.Response
}

func (h *httpClient) do(ctx context.Context, deadline time.Time, o *outcome, i int) error {
	err := h.c.Do(ctx, h.reqs[i], &h.resp, deadline)
	o.status = h.resp.Status
	o.bytes = h.resp.WireBytes
	o.body = h.resp.Body
	o.stderrBytes, o.fcgiStatus, o.stderr = 0, 0, nil
	return err
}
func (h *httpClient) reconnects() int64 { return h.c.Reconnects() }
func (h *httpClient) close() error      { return h.c.Close() }

type fcgiClient struct {
	c    *fcgi.Client
	reqs []*fcgi.Request
	resp fcgi.Response
}

func (f *fcgiClient) do(ctx context.Context, deadline time.Time, o *outcome, i int) error {
	err := f.c.Do(ctx, f.reqs[i], &f.resp, deadline)
	o.status = f.resp.Status
	o.bytes = f.resp.HeaderBytes + f.resp.BodyBytes
	o.body = f.resp.Body
	o.stderrBytes = f.resp.StderrBytes
	o.stderr = f.resp.Stderr
	o.fcgiStatus = f.resp.ProtocolStatus
	return err
}
func (f *fcgiClient) reconnects() int64 { return f.c.Reconnects() }
func (f *fcgiClient) close() error      { return f.c.Close() }

// Error classes of failed requests.
const (
	ClassConnect    = "connect"
	ClassTimeout    = "timeout"
	ClassIO         = "read_write"
	ClassProtocol   = "protocol"    // the peer does not speak the target's protocol
	ClassFCGIStatus = "fcgi_status" // END_REQUEST with a protocol status other than complete
	Class4xx        = "http_4xx"    // statuses 400-499
	Class5xx        = "http_5xx"    // 500-599 but 502 and 504
	Class502        = "http_502"    // bad gateway: nginx could not reach php-fpm
	Class504        = "http_504"    // gateway timeout: php-fpm too slow for nginx
	ClassStatus     = "status"      // a status outside --expect-status
	ClassBody       = "body"        // the body did not match --expect-body
	ClassPHPStderr  = "php_stderr"  // PHP wrote to FastCGI stderr (warnings, notices, fatal errors)
	classCount      = 12
)

var classNames = [classCount]string{ClassConnect, ClassTimeout, ClassIO, ClassProtocol, ClassFCGIStatus,
	Class4xx, Class5xx, Class502, Class504, ClassStatus, ClassBody, ClassPHPStderr}

const (
	cConnect = iota
	cTimeout
	cIO
	cProtocol
	cFCGIStatus
	c4xx
	c5xx
	c502
	c504
	cStatus
	cBody
	cStderr
)

// classifyErr maps a transport error to its class.
func classifyErr(err error) int {
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, context.DeadlineExceeded):
		return cTimeout
	case errors.Is(err, fcgi.ErrConnect), errors.Is(err, http1.ErrConnect):
		return cConnect
	case errors.Is(err, fcgi.ErrProtocol), errors.Is(err, http1.ErrProtocol):
		return cProtocol
	}
	return cIO
}
