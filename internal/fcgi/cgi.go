package fcgi

import (
	"context"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"
)

// CGIOptions describes one request as a web server would pass it on.
// Empty fields get the defaults documented on CGIParams.
type CGIOptions struct {
	Method         string // default GET
	ScriptFilename string // absolute path of the script
	DocumentRoot   string // default: the directory of ScriptFilename
	ScriptName     string // default: "/" + base name of ScriptFilename
	RequestURI     string // default: ScriptName, plus "?" + QueryString if any
	QueryString    string
	ServerName     string // default localhost
	ServerAddr     string // default 127.0.0.1
	ServerPort     int    // default 80
	RemoteAddr     string // default 127.0.0.1
	RemotePort     int    // sent as is (0 when unset)
	Headers        []Param
	BodyLen        int
}

// CGIParams returns the params nginx's fastcgi.conf would send for o.
// Headers become HTTP_* params (X-Foo -> HTTP_X_FOO; repeats joined with ", ",
// or "; " for Cookie), except Content-Type and Content-Length, which become
// CONTENT_TYPE and CONTENT_LENGTH; like nginx, these two are sent empty when
// there is no such header and no body. HTTPS is omitted (plain HTTP).
func CGIParams(o CGIOptions) []Param {
	if o.Method == "" {
		o.Method = "GET"
	}
	if o.DocumentRoot == "" && o.ScriptFilename != "" {
		o.DocumentRoot = path.Dir(o.ScriptFilename)
	}
	if o.ScriptName == "" && o.ScriptFilename != "" {
		o.ScriptName = "/" + path.Base(o.ScriptFilename)
	}
	if o.RequestURI == "" {
		o.RequestURI = o.ScriptName
		if o.QueryString != "" {
			o.RequestURI += "?" + o.QueryString
		}
	}
	if o.ServerName == "" {
		o.ServerName = "localhost"
	}
	if o.ServerAddr == "" {
		o.ServerAddr = "127.0.0.1"
	}
	if o.ServerPort == 0 {
		o.ServerPort = 80
	}
	if o.RemoteAddr == "" {
		o.RemoteAddr = "127.0.0.1"
	}

	var contentType, contentLength string
	var httpParams []Param
	for _, h := range o.Headers {
		switch {
		case strings.EqualFold(h.Name, "Content-Type"):
			contentType = h.Value
			continue
		case strings.EqualFold(h.Name, "Content-Length"):
			contentLength = h.Value
			continue
		}
		name := "HTTP_" + strings.Map(cgiNameChar, h.Name)
		sep := ", "
		if name == "HTTP_COOKIE" {
			sep = "; "
		}
		merged := false
		for i := range httpParams {
			if httpParams[i].Name == name {
				httpParams[i].Value += sep + h.Value
				merged = true
				break
			}
		}
		if !merged {
			httpParams = append(httpParams, Param{name, h.Value})
		}
	}
	if o.BodyLen > 0 {
		contentLength = strconv.Itoa(o.BodyLen)
	}

	// The order follows nginx's fastcgi.conf.
	p := make([]Param, 0, 20+len(httpParams))
	p = append(p,
		Param{"SCRIPT_FILENAME", o.ScriptFilename},
		Param{"QUERY_STRING", o.QueryString},
		Param{"REQUEST_METHOD", o.Method},
		Param{"CONTENT_TYPE", contentType},
		Param{"CONTENT_LENGTH", contentLength},
		Param{"SCRIPT_NAME", o.ScriptName},
		Param{"REQUEST_URI", o.RequestURI},
		Param{"DOCUMENT_URI", o.ScriptName},
		Param{"DOCUMENT_ROOT", o.DocumentRoot},
		Param{"SERVER_PROTOCOL", "HTTP/1.1"},
		Param{"REQUEST_SCHEME", "http"},
		Param{"GATEWAY_INTERFACE", "CGI/1.1"},
		Param{"SERVER_SOFTWARE", "phptune"},
		Param{"REMOTE_ADDR", o.RemoteAddr},
		Param{"REMOTE_PORT", strconv.Itoa(o.RemotePort)},
		Param{"SERVER_ADDR", o.ServerAddr},
		Param{"SERVER_PORT", strconv.Itoa(o.ServerPort)},
		Param{"SERVER_NAME", o.ServerName},
		// php-cgi built with force-cgi-redirect refuses requests without it.
		Param{"REDIRECT_STATUS", "200"},
	)
	return append(p, httpParams...)
}

func cgiNameChar(r rune) rune {
	switch {
	case r >= 'a' && r <= 'z':
		return r - 'a' + 'A'
	case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		return r
	}
	return '_'
}

// Get performs one request on a fresh connection and returns the status, the
// body and the stderr output. It is for occasional use (status pages, health
// checks), not the hot path. Cancelling ctx interrupts it. A response whose
// END_REQUEST reports a protocol status other than complete is an error.
func Get(ctx context.Context, network, address string, params []Param) (status int, body, stderr []byte, err error) {
	c, err := Dial(ctx, network, address)
	if err != nil {
		return 0, nil, nil, err
	}
	defer c.Close()

	// Set the deadline here rather than through Do so that a cancellation
	// (which moves it into the past) cannot be overwritten.
	deadline, _ := ctx.Deadline()
	if err := c.nc.SetDeadline(deadline); err != nil {
		return 0, nil, nil, fmt.Errorf("fcgi: set deadline: %w", err)
	}
	c.deadline = deadline
	stop := context.AfterFunc(ctx, func() { _ = c.nc.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	resp := Response{KeepBody: true, stderrKeep: 1 << 20}
	if err := c.Do(NewRequest(params, nil), &resp, deadline); err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return 0, nil, nil, fmt.Errorf("%w: %w", ctxErr, err)
		}
		return 0, nil, nil, err
	}
	if resp.ProtocolStatus != StatusRequestComplete {
		return resp.Status, resp.Body, resp.Stderr, fmt.Errorf("fcgi: request not completed: protocol status %d", resp.ProtocolStatus)
	}
	return resp.Status, resp.Body, resp.Stderr, nil
}

// StatusParams returns the params that reach php-fpm's status page (or ping
// page) at path without a web server in front: SCRIPT_NAME and
// SCRIPT_FILENAME both set to path. query is passed as QUERY_STRING, e.g.
// "json&full".
func StatusParams(path, query string) []Param {
	uri := path
	if query != "" {
		uri += "?" + query
	}
	return []Param{
		{"SCRIPT_FILENAME", path},
		{"SCRIPT_NAME", path},
		{"REQUEST_URI", uri},
		{"QUERY_STRING", query},
		{"REQUEST_METHOD", "GET"},
		{"SERVER_PROTOCOL", "HTTP/1.1"},
		{"GATEWAY_INTERFACE", "CGI/1.1"},
	}
}
