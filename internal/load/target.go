// Package load is phptune's load generator: N connections driving one target over HTTP/1.1 or straight to
// php-fpm over FastCGI, latencies in HDR histograms, errors by class, its own CPU cost measured.
package load

import (
	"fmt"
	"net"
	"net/url"
	"path"
	"strconv"
	"strings"

	"github.com/phptune/phptune/internal/exitcode"
)

// Protocols a target speaks.
const (
	HTTP    = "http"
	FastCGI = "fcgi"
)

// Target is where load goes.
type Target struct {
	Raw      string
	Protocol string // HTTP or FastCGI
	Network  string // "tcp" or "unix"
	Address  string // host:port or socket path

	// HTTP
	Host       string // Host header
	RequestURI string // path?query as sent (HTTP); for FastCGI the REQUEST_URI param

	// FastCGI
	Script       string // SCRIPT_FILENAME: absolute path as php-fpm sees it
	Query        string // QUERY_STRING
	DocumentRoot string // DOCUMENT_ROOT; default the script's directory
	ScriptName   string // SCRIPT_NAME; default "/" + the script's base name
}

const targetForms = "http://HOST:PORT/PATH, fcgi://HOST:PORT/ABS/SCRIPT.php?QUERY or unix:/SOCKET:/ABS/SCRIPT.php?QUERY"

// ParseTarget parses the three target forms.
func ParseTarget(s string) (Target, error) {
	t := Target{Raw: s}
	switch {
	case strings.HasPrefix(s, "http://"):
		u, err := url.Parse(s)
		if err != nil || u.Host == "" {
			return t, exitcode.UsageErrorf("target %q: not a valid URL: want %s", s, targetForms)
		}
		t.Protocol, t.Network, t.Host = HTTP, "tcp", u.Host
		t.Address = u.Host
		if u.Port() == "" {
			t.Address = net.JoinHostPort(u.Hostname(), "80")
		}
		t.RequestURI = u.RequestURI()
		return t, nil
	case strings.HasPrefix(s, "https://"):
		return t, exitcode.UsageErrorf("target %q: https is not supported: bench the plain-HTTP listener (phptune serves on loopback)", s)
	case strings.HasPrefix(s, "fcgi://"):
		rest := strings.TrimPrefix(s, "fcgi://")
		i := strings.IndexByte(rest, '/')
		if i <= 0 {
			return t, exitcode.UsageErrorf("target %q: want fcgi://HOST:PORT/ABS/PATH/script.php", s)
		}
		host := rest[:i]
		if _, port, err := net.SplitHostPort(host); err != nil || port == "" {
			return t, exitcode.UsageErrorf("target %q: %q needs a port, as in fcgi://127.0.0.1:9000/var/www/index.php", s, host)
		}
		t.Protocol, t.Network, t.Address = FastCGI, "tcp", host
		return t, t.setScript(rest[i:])
	case strings.HasPrefix(s, "unix:"):
		rest := strings.TrimPrefix(s, "unix:")
		i := strings.Index(rest, ":/")
		if i <= 0 {
			return t, exitcode.UsageErrorf("target %q: want unix:/path/to.sock:/abs/path/script.php", s)
		}
		t.Protocol, t.Network, t.Address = FastCGI, "unix", rest[:i]
		return t, t.setScript(rest[i+1:])
	}
	return t, exitcode.UsageErrorf("target %q: unknown scheme: want %s", s, targetForms)
}

func (t *Target) setScript(s string) error {
	script, query, _ := strings.Cut(s, "?")
	if !path.IsAbs(script) || strings.HasSuffix(script, "/") {
		return exitcode.UsageErrorf("target %q: the script %q must be an absolute file path as php-fpm sees it", t.Raw, script)
	}
	t.Script, t.Query = script, query
	return nil
}

// String is the target as given.
func (t Target) String() string { return t.Raw }

// ParseHeader parses "Name: value".
func ParseHeader(h string) ([2]string, error) {
	name, value, ok := strings.Cut(h, ":")
	name = strings.TrimSpace(name)
	if !ok || name == "" || strings.ContainsAny(name, " \t\r\n") {
		return [2]string{}, exitcode.UsageErrorf("header %q: want \"Name: value\"", h)
	}
	return [2]string{name, strings.TrimSpace(value)}, nil
}

// ParseStatuses parses "200,301-302" into a set of accepted statuses.
func ParseStatuses(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err1 := strconv.Atoi(lo)
		b := a
		var err2 error
		if isRange {
			b, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || a < 100 || b > 599 || a > b {
			return nil, exitcode.UsageErrorf("--expect-status %q: want codes or ranges such as 200,301-302", s)
		}
		for c := a; c <= b; c++ {
			out = append(out, c)
		}
	}
	return out, nil
}

func (t Target) describe() string {
	if t.Protocol == HTTP {
		return fmt.Sprintf("HTTP %s", t.Raw)
	}
	return fmt.Sprintf("FastCGI %s:%s %s", t.Network, t.Address, t.Script)
}
