// Package urlfile reads a URL file: the requests of a mix as users send them (method, headers, cookies, a body
// or a form, a weight and a content marker per URL), and a login request sent once before the run whose cookies
// then go with every URL (a logged-in page). YAML or JSON (JSON is YAML):
//
//	login:
//	  path: /wp-login.php
//	  form: {log: admin, pwd: secret}
//	  cookies: {wordpress_test_cookie: WP Cookie check}
//	  expect_cookie: wordpress_logged_in_   # or expect_status: 302
//	urls:
//	  - path: /
//	    weight: 10
//	    expect: "<title>"
//	  - path: /wp-admin/
//	  - path: /?s=hello
//	    anonymous: true
//	  - path: /wp-comments-post.php
//	    form: {comment: nice, comment_post_ID: "1"}
//
// Files: urlfile.go (the format and its checks), request.go (requests built from it), login.go.
package urlfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/phptune/phptune/internal/suggest"
)

// Request is how one request is sent. Method defaults to POST when there is a body, else GET.
type Request struct {
	Path     string            `yaml:"path"`
	Method   string            `yaml:"method"`
	Headers  map[string]string `yaml:"headers"`
	Cookies  map[string]string `yaml:"cookies"`
	Body     string            `yaml:"body"`      // sent as given
	BodyFile string            `yaml:"body_file"` // relative to the URL file
	Form     map[string]string `yaml:"form"`      // application/x-www-form-urlencoded
	JSON     any               `yaml:"json"`      // encoded as JSON, application/json
}

// URL is one entry of the mix.
type URL struct {
	Request   `yaml:",inline"`
	Weight    int    `yaml:"weight"`    // default 1
	Expect    string `yaml:"expect"`    // a regular expression every response body must match
	Anonymous bool   `yaml:"anonymous"` // sent without the login's cookies
}

// Login is the request sent once before the run.
type Login struct {
	Request `yaml:",inline"`
	// ExpectCookie is the start of a cookie name the login must set (a failed login sets none, or others).
	ExpectCookie string `yaml:"expect_cookie"`
	// ExpectStatus is the status a successful login answers with (often 302; a failed one shows the form again
	// with 200 and, with PHP's sessions, sets the session cookie all the same).
	ExpectStatus int `yaml:"expect_status"`
}

// File is a URL file as read.
type File struct {
	Login *Login `yaml:"login"`
	URLs  []URL  `yaml:"urls"`
	dir   string // for body_file
}

// Load reads and checks the file at path.
func Load(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("URL file: %w", err)
	}
	f, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("URL file %s: %w", path, err)
	}
	f.dir = filepath.Dir(path)
	return f, nil
}

// Parse reads a URL file's content; a field it does not know is an error (a typo must not be ignored), with the
// nearest field's name.
func Parse(data []byte) (*File, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var f File
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("it is empty: give urls: with a path each")
		}
		var te *yaml.TypeError
		if !errors.As(err, &te) {
			return nil, errors.New(syntaxError(data, err))
		}
		return nil, errors.New(oneLine(te))
	}
	return &f, f.check()
}

var unknownField = regexp.MustCompile(`^(line \d+: )?field (\S+) not found in type urlfile\.(\w+)$`)

// oneLine is a YAML type error as one line: its entries joined, an unknown field with the nearest known name.
func oneLine(te *yaml.TypeError) string {
	var parts []string
	for _, l := range te.Errors {
		l = strings.TrimSpace(l)
		if m := unknownField.FindStringSubmatch(l); m != nil {
			known := fieldsOf(m[3])
			near := suggest.Phrase(m[2], known)
			if near == "" {
				near = " (the fields: " + strings.Join(known, ", ") + ")"
			}
			l = fmt.Sprintf("%sunknown field %q%s; see docs/urls.md", m[1], m[2], near)
		} else if i := strings.Index(l, " in type urlfile."); i >= 0 {
			l = l[:i] + " (see docs/urls.md)"
		}
		if l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, "; ")
}

// fieldsOf are the YAML names of the fields of the type called name in this package (URL, Login, File).
func fieldsOf(name string) []string {
	types := map[string]reflect.Type{"URL": reflect.TypeOf(URL{}), "Login": reflect.TypeOf(Login{}), "File": reflect.TypeOf(File{}),
		"Request": reflect.TypeOf(Request{})}
	var out []string
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for i := 0; i < t.NumField(); i++ {
			tag, opts, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
			switch {
			case opts == "inline":
				walk(t.Field(i).Type)
			case tag != "" && tag != "-":
				out = append(out, tag)
			}
		}
	}
	if t, ok := types[name]; ok {
		walk(t)
	}
	return out
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): `)

// syntaxError is a YAML syntax error on the line where it is: the parser names the line where the block around
// the error began (an indentation slip on line 3 of a list that begins on line 1 is reported on line 1). The
// line taken is the first after the longest start of the file that still parses, with its text.
func syntaxError(data []byte, err error) string {
	msg := err.Error()
	m := yamlLine.FindStringSubmatch(msg)
	if m == nil {
		return strings.TrimPrefix(msg, "yaml: ")
	}
	lines := strings.SplitAfter(string(data), "\n")
	good := 0
	for n := 1; n <= len(lines); n++ {
		var node yaml.Node
		if yaml.Unmarshal([]byte(strings.Join(lines[:n], "")), &node) == nil {
			good = n
		}
	}
	at := min(good+1, len(lines))
	text := strings.TrimRight(lines[at-1], "\r\n")
	return fmt.Sprintf("line %d: %s: %q", at, msg[len(m[0]):], text)
}

func (f *File) check() error {
	if len(f.URLs) == 0 {
		return errors.New("no urls: give urls: with a path each")
	}
	for i, u := range f.URLs {
		if err := u.Request.check(); err != nil {
			return fmt.Errorf("urls[%d]: %w", i, err)
		}
		if u.Weight < 0 {
			return fmt.Errorf("urls[%d] %s: weight %d: give a whole number of at least 1", i, u.Path, u.Weight)
		}
		if _, err := regexp.Compile(u.Expect); err != nil {
			return fmt.Errorf("urls[%d] %s: expect: %w", i, u.Path, err)
		}
	}
	if f.Login != nil {
		if err := f.Login.Request.check(); err != nil {
			return fmt.Errorf("login: %w", err)
		}
	}
	return nil
}

func (r *Request) check() error {
	if !strings.HasPrefix(r.Path, "/") {
		return fmt.Errorf("path %q: give a path starting with /", r.Path)
	}
	bodies := 0
	for _, set := range []bool{r.Body != "", r.BodyFile != "", r.Form != nil, r.JSON != nil} {
		if set {
			bodies++
		}
	}
	if bodies > 1 {
		return fmt.Errorf("%s: give one of body, body_file, form and json", r.Path)
	}
	if strings.ContainsAny(r.Method, " \t\r\n") {
		return fmt.Errorf("%s: method %q", r.Path, r.Method)
	}
	for name := range r.Headers {
		if name == "" || strings.ContainsAny(name, " \t\r\n:") {
			return fmt.Errorf("%s: header name %q", r.Path, name)
		}
	}
	return nil
}
