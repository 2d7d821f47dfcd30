package load

import (
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/phptune/phptune/internal/exitcode"
)

// ParseURLs reads --url PATH[=WEIGHT] values, each response checked against check (nil: no check).
func ParseURLs(urls []string, check *regexp.Regexp) ([]MixItem, error) {
	var out []MixItem
	for _, u := range urls {
		path, w, hasW := cutWeight(u)
		weight := 1
		if hasW {
			var err error
			if weight, err = strconv.Atoi(w); err != nil || weight < 1 {
				return nil, exitcode.UsageErrorf("--url %s: the weight must be a whole number of at least 1", u)
			}
		}
		if !strings.HasPrefix(path, "/") {
			return nil, exitcode.UsageErrorf("--url %s: give a path starting with /, as in --url /blog/", u)
		}
		out = append(out, MixItem{URI: path, Weight: weight, ExpectBody: check})
	}
	return out, nil
}

// cutWeight splits PATH[=WEIGHT] at its last '=', unless that '=' is the query's own: /a?page=2 is a path,
// /a?page=2=3 and /a=3 are weighted 3.
func cutWeight(u string) (path, weight string, ok bool) {
	i := strings.LastIndexByte(u, '=')
	if i < 0 {
		return u, "", false
	}
	if q := strings.IndexByte(u[:i], '?'); q >= 0 {
		params := u[q+1 : i]
		if !strings.Contains(params[strings.LastIndexByte(params, '&')+1:], "=") {
			return u, "", false
		}
	}
	return u[:i], u[i+1:], true
}

// ParseRequest reads -m, -H and --body into the request every URL is sent with.
func ParseRequest(method string, headers []string, bodyFile string, keepAlive bool) (Request, error) {
	req := Request{Method: method, KeepAlive: keepAlive}
	for _, h := range headers {
		hv, err := ParseHeader(h)
		if err != nil {
			return req, err
		}
		req.Headers = append(req.Headers, hv)
	}
	if bodyFile != "" {
		var err error
		if req.Body, err = os.ReadFile(bodyFile); err != nil {
			return req, exitcode.UsageErrorf("--body: %v", err)
		}
	}
	return req, nil
}

// URIs are the mix's URIs, each once, in the mix's order.
func URIs(mix []MixItem) []string {
	var uris []string
	for _, m := range mix {
		if !slices.Contains(uris, m.URI) {
			uris = append(uris, m.URI)
		}
	}
	return uris
}
