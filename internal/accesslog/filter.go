package accesslog

import (
	"bytes"
	"fmt"
	"strings"
)

// Keep turns off filters: what each drops is not worth replaying by default.
type Keep struct{ Static, Health, Methods, Errors bool }

// ParseKeep parses a comma list of static, health, methods, errors ("" keeps nothing extra).
func ParseKeep(s string) (Keep, error) {
	var k Keep
	for _, w := range strings.Split(s, ",") {
		switch strings.ToLower(strings.TrimSpace(w)) {
		case "":
		case "static":
			k.Static = true
		case "health":
			k.Health = true
		case "methods":
			k.Methods = true
		case "errors":
			k.Errors = true
		default:
			return Keep{}, fmt.Errorf("unknown --log-keep word %q: use a comma list of static, health, methods, errors", strings.TrimSpace(w))
		}
	}
	return k, nil
}

// reason is why a request was dropped; the order is the order the filters run in.
type reason int

const (
	keepIt reason = iota
	byNoRequest
	byMethod
	byStatus
	byStatic
	byHealth
	byExclude
	nReasons
)

// reasons names each reason as in Mix.Dropped, says what it drops, and the --log-keep word that keeps it.
var reasons = [nReasons]struct{ key, what, word string }{
	byNoRequest: {"no_request", "without a request (\"-\" on a timeout, OPTIONS *, a scanner's bytes)", ""},
	byMethod:    {"method", "not GET", "methods"},
	byStatus:    {"status", "not 2xx/304", "errors"},
	byStatic:    {"static", "static files", "static"},
	byHealth:    {"health", "health checks", "health"},
	byExclude:   {"excluded", "excluded by --log-exclude", ""},
}

// drop says why r is not replayed, or keepIt; r.static must be set. Only GET by default: replaying a POST repeats its
// side effects; only 2xx and 304: an error or a redirect measures that, not the page.
func (k Keep) drop(r *request) reason {
	if r.uri == nil {
		return byNoRequest // the server logged a connection, not a request: nothing to replay, whatever kept
	}
	if !k.Methods && !bytes.Equal(r.method, get) {
		return byMethod
	}
	if !k.Errors && r.status >= 0 && !(r.status >= 200 && r.status < 300 || r.status == 304) {
		return byStatus
	}
	if !k.Static && r.static {
		return byStatic
	}
	if !k.Health && isHealth(pathOf(r.uri)) {
		return byHealth
	}
	return keepIt
}

// staticExt are extensions nginx serves without PHP. xml is not one: sitemaps are often PHP.
var staticExt = setOf("css", "js", "mjs", "map", "png", "jpg", "jpeg", "gif", "webp", "avif", "svg", "ico",
	"bmp", "tif", "tiff", "woff", "woff2", "ttf", "otf", "eot", "mp3", "mp4", "webm", "ogg", "wav", "flac",
	"avi", "mov", "pdf", "zip", "gz", "tgz", "bz2", "xz", "7z", "rar", "txt", "csv")

// healthPaths are health checks and server status pages: replaying them measures nothing of the app.
var healthPaths = setOf("/health", "/healthz", "/healthcheck", "/health-check", "/ping", "/ready",
	"/readiness", "/live", "/liveness", "/status", "/fpm-status", "/php-fpm-status", "/server-status",
	"/nginx_status", "/metrics")

func setOf(s ...string) map[string]bool {
	m := make(map[string]bool, len(s))
	for _, x := range s {
		m[x] = true
	}
	return m
}

// pathOf is uri without its query.
func pathOf(uri []byte) []byte {
	if i := bytes.IndexByte(uri, '?'); i >= 0 {
		return uri[:i]
	}
	return uri
}

func isStatic(path []byte) bool {
	dot := bytes.LastIndexByte(path, '.')
	if dot < 0 || bytes.IndexByte(path[dot:], '/') >= 0 {
		return false
	}
	var buf [8]byte
	ext, ok := lower(buf[:0], path[dot+1:])
	return ok && staticExt[string(ext)]
}

func isHealth(path []byte) bool {
	const wk = "/.well-known"
	if len(path) >= len(wk) && bytes.EqualFold(path[:len(wk)], []byte(wk)) &&
		(len(path) == len(wk) || path[len(wk)] == '/') {
		return true
	}
	if len(path) > 1 && path[len(path)-1] == '/' {
		path = path[:len(path)-1]
	}
	var buf [16]byte
	p, ok := lower(buf[:0], path)
	return ok && healthPaths[string(p)]
}

// lower appends b lower-cased to buf without allocating; false when b does not fit, which the
// callers' short names never do.
func lower(buf, b []byte) ([]byte, bool) {
	if len(b) > cap(buf) {
		return nil, false
	}
	for _, c := range b {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf = append(buf, c)
	}
	return buf, true
}
