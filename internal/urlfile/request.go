package urlfile

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/phptune/phptune/internal/load"
)

// Mix is a URL file made into load's mix: each URL's request built over the command's own (-m, -H), and the
// login still to be sent.
type Mix struct {
	Items   []load.MixItem
	session []bool // the URL takes the login's cookies
	login   *Login
	loginRq load.Request
}

// Mix builds the requests of f over base (the command's -H headers and method), each checked against its
// expect, or check when it has none.
func (f *File) Mix(base load.Request, check *regexp.Regexp) (*Mix, error) {
	m := &Mix{login: f.Login}
	for _, u := range f.URLs {
		r, err := f.build(u.Request, base)
		if err != nil {
			return nil, err
		}
		re := check
		if u.Expect != "" {
			re = regexp.MustCompile(u.Expect) // checked by Parse
		}
		m.Items = append(m.Items, load.MixItem{URI: u.Path, Weight: max(u.Weight, 1), ExpectBody: re, Request: &r})
		m.session = append(m.session, f.Login != nil && !u.Anonymous)
	}
	if f.Login != nil {
		r, err := f.build(f.Login.Request, base)
		if err != nil {
			return nil, err
		}
		m.loginRq = r
	}
	return m, nil
}

// build is r as load sends it: base's headers, then r's (a name given again replaces base's), its cookies, its
// body with the content type that goes with it.
func (f *File) build(r Request, base load.Request) (load.Request, error) {
	out := load.Request{Method: strings.ToUpper(r.Method), KeepAlive: base.KeepAlive}
	body, ctype, err := f.body(r)
	if err != nil {
		return out, err
	}
	out.Body = body
	if out.Method == "" {
		out.Method = cmp.Or(base.Method, "GET")
		if body != nil && out.Method == "GET" {
			out.Method = "POST"
		}
	}
	for _, h := range base.Headers {
		if _, mine := lookup(r.Headers, h[0]); !mine && (ctype == "" || !strings.EqualFold(h[0], "Content-Type")) {
			out.Headers = append(out.Headers, h)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(r.Headers)) {
		out.Headers = append(out.Headers, [2]string{name, r.Headers[name]})
	}
	if _, given := lookup(r.Headers, "Content-Type"); ctype != "" && !given {
		out.Headers = append(out.Headers, [2]string{"Content-Type", ctype})
	}
	if len(r.Cookies) > 0 {
		out.Headers = addCookies(out.Headers, cookieString(r.Cookies))
	}
	return out, nil
}

// body is the request's body and its content type ("" for a raw body: the user says what it is).
func (f *File) body(r Request) ([]byte, string, error) {
	switch {
	case r.Body != "":
		return []byte(r.Body), "", nil
	case r.BodyFile != "":
		p := r.BodyFile
		if !filepath.IsAbs(p) {
			p = filepath.Join(f.dir, p)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, "", fmt.Errorf("%s: body_file: %w", r.Path, err)
		}
		return b, "", nil
	case r.Form != nil:
		v := url.Values{}
		for k, x := range r.Form {
			v.Set(k, x)
		}
		return []byte(v.Encode()), "application/x-www-form-urlencoded", nil
	case r.JSON != nil:
		b, err := json.Marshal(r.JSON)
		if err != nil {
			return nil, "", fmt.Errorf("%s: json: %w", r.Path, err)
		}
		return b, "application/json", nil
	}
	return nil, "", nil
}

func lookup(h map[string]string, name string) (string, bool) {
	for k, v := range h {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return "", false
}

func cookieString(c map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(c)) {
		parts = append(parts, k+"="+c[k])
	}
	return strings.Join(parts, "; ")
}

// addCookies appends cookies to the request's Cookie header, or adds one.
func addCookies(h [][2]string, cookies string) [][2]string {
	out := slices.Clone(h)
	for i := range out {
		if strings.EqualFold(out[i][0], "Cookie") {
			out[i][1] += "; " + cookies
			return out
		}
	}
	return append(out, [2]string{"Cookie", cookies})
}
