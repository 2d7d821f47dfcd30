package urlfile

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/load"
)

const wp = `
login:
  path: /wp-login.php
  form: {log: admin, pwd: secret}
  cookies: {wordpress_test_cookie: WP Cookie check}
  expect_cookie: wordpress_logged_in_
urls:
  - path: /
    weight: 10
    expect: "<title>"
  - path: /wp-admin/
  - path: /?s=hello
    anonymous: true
  - path: /api
    json: {a: [1, 2], b: x}
    headers: {X-Api: "1", user-agent: mine}
  - path: /raw
    body_file: body.txt
    method: PUT
`

func load1(t *testing.T, text string) *File {
	t.Helper()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "body.txt"), []byte("RAW"), 0o600)
	p := filepath.Join(dir, "urls.yaml")
	os.WriteFile(p, []byte(text), 0o600)
	f, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func header(r *load.Request, name string) string {
	for _, h := range r.Headers {
		if strings.EqualFold(h[0], name) {
			return h[1]
		}
	}
	return ""
}

func TestRequestsAreBuiltAsWritten(t *testing.T) {
	f := load1(t, wp)
	base := load.Request{Method: "GET", Headers: [][2]string{{"User-Agent", "phptune"}, {"Accept", "*/*"}}}
	m, err := f.Mix(base, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Items) != 5 || m.Items[0].Weight != 10 || m.Items[1].Weight != 1 || m.Items[0].ExpectBody == nil {
		t.Fatalf("items %+v", m.Items)
	}
	api := m.Items[3].Request
	if api.Method != "POST" || string(api.Body) != `{"a":[1,2],"b":"x"}` || header(api, "Content-Type") != "application/json" {
		t.Errorf("json request: %s %q %v", api.Method, api.Body, api.Headers)
	}
	if header(api, "User-Agent") != "mine" || header(api, "Accept") != "*/*" || header(api, "X-Api") != "1" {
		t.Errorf("the URL's headers replace the command's, the others stay: %v", api.Headers)
	}
	raw := m.Items[4].Request
	if raw.Method != "PUT" || string(raw.Body) != "RAW" || header(raw, "Content-Type") != "" {
		t.Errorf("raw request: %s %q %v", raw.Method, raw.Body, raw.Headers)
	}
	if m.Items[0].Request.Method != "GET" || m.Items[0].Request.Body != nil {
		t.Errorf("a page without a body is a GET: %+v", m.Items[0].Request)
	}
	login := m.loginRq
	if login.Method != "POST" || string(login.Body) != "log=admin&pwd=secret" ||
		header(&login, "Cookie") != "wordpress_test_cookie=WP Cookie check" {
		t.Errorf("login request: %s %q %v", login.Method, login.Body, login.Headers)
	}
}

func TestBadFilesSayWhere(t *testing.T) {
	cases := map[string]string{
		"":                                    "empty",
		"urls: []":                            "no urls",
		"urls:\n  - path: x":                  "starting with /",
		"urls:\n  - path: /\n    weigth: 3":   "weigth",
		"urls:\n  - path: /\n    weight: -1":  "weight -1",
		"urls:\n  - path: /\n    expect: '('": "expect",
		"urls:\n  - path: /\n    body: a\n    form: {a: b}": "one of body",
		"login: {path: nope}\nurls:\n  - path: /":           "login",
		"urls: [": "line",
	}
	for text, want := range cases {
		if _, err := Parse([]byte(text)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want one saying %q", text, err, want)
		}
	}
	if _, err := Parse([]byte(`{"urls": [{"path": "/", "weight": 2}]}`)); err != nil {
		t.Errorf("JSON: %v", err)
	}
}

// A fake login (the real one, WordPress's, is in the command's tests): a form post that sets the session cookie
// when the password is right, and deletes the test cookie.
func fakeLogin(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		if c, err := r.Cookie("wordpress_test_cookie"); err != nil || c.Value != "WP Cookie check" {
			http.Error(w, "no test cookie", http.StatusForbidden)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: "wordpress_test_cookie", Value: "", MaxAge: -1})
		if r.PostForm.Get("pwd") == "secret" {
			http.SetCookie(w, &http.Cookie{Name: "wordpress_logged_in_abc", Value: "admin|123"})
			http.Redirect(w, r, "/wp-admin/", http.StatusFound)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: "other", Value: "1"})
		w.Write([]byte("<form>wrong password</form>"))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestLoginCookiesGoWithTheSessionsURLs(t *testing.T) {
	srv := fakeLogin(t)
	m, err := load1(t, wp).Mix(load.Request{Method: "GET"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	items, err := m.LogIn(context.Background(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	want := "wordpress_logged_in_abc=admin|123" // the test cookie, deleted by the login, is not sent
	if got := header(items[1].Request, "Cookie"); got != want {
		t.Errorf("/wp-admin/ Cookie %q, want %q", got, want)
	}
	if got := header(items[2].Request, "Cookie"); got != "" {
		t.Errorf("the anonymous URL was sent cookies: %q", got)
	}
	if header(m.Items[1].Request, "Cookie") != "" {
		t.Error("LogIn changed the mix it was given")
	}
}

// SessionAmid: the command's whole mix logged in, the file's URLs in place between the --url entries and the
// access log's, only the session's URLs with the cookie; nil without a login.
func TestSessionAmidKeepsTheWholeMix(t *testing.T) {
	srv := fakeLogin(t)
	m, err := load1(t, wp).Mix(load.Request{Method: "GET"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	before, after := []load.MixItem{{URI: "/first", Weight: 2}}, []load.MixItem{{URI: "/logged", Weight: 5}}
	items, err := m.SessionAmid(before, after)(context.Background(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 2+len(m.Items) || items[0].URI != "/first" || items[len(items)-1].URI != "/logged" ||
		items[1].URI != m.Items[0].URI {
		t.Fatalf("mix %+v: want /first, the file's %d URLs, then /logged", items, len(m.Items))
	}
	if got := header(items[2].Request, "Cookie"); got != "wordpress_logged_in_abc=admin|123" {
		t.Errorf("the file's /wp-admin/ Cookie %q, want the session's", got)
	}
	if items[0].Request != nil || items[len(items)-1].Request != nil {
		t.Error("the URLs around the file's were given a request of their own")
	}
	noLogin, _ := load1(t, "urls:\n  - path: /\n").Mix(load.Request{}, nil)
	if noLogin.SessionAmid(before, after) != nil {
		t.Error("a file without a login has a session")
	}
}

func TestAFailedLoginIsAnError(t *testing.T) {
	srv := fakeLogin(t)
	f := load1(t, strings.Replace(wp, "pwd: secret", "pwd: wrong", 1))
	m, _ := f.Mix(load.Request{}, nil)
	_, err := m.LogIn(context.Background(), srv.URL)
	if err == nil || !strings.Contains(err.Error(), "set no cookie named wordpress_logged_in_* (it set other)") {
		t.Errorf("wrong password: %v", err)
	}
	f = load1(t, strings.Replace(wp, "wordpress_test_cookie: WP", "wordpress_test_cookie: XX", 1))
	m, _ = f.Mix(load.Request{}, nil)
	if _, err := m.LogIn(context.Background(), srv.URL); err == nil || !strings.Contains(err.Error(), "status 403") {
		t.Errorf("refused login: %v", err)
	}
}

// A form or JSON body's Content-Type replaces the command's -H one (never two); a method is sent upper-case;
// an unknown field is one line that names it.
func TestBuildDetails(t *testing.T) {
	f := load1(t, "urls:\n  - path: /f\n    method: post\n    form: {a: b}\n")
	m, err := f.Mix(load.Request{Method: "GET", Headers: [][2]string{{"Content-Type", "text/plain"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := m.Items[0].Request
	n := 0
	for _, h := range r.Headers {
		if strings.EqualFold(h[0], "Content-Type") {
			n++
		}
	}
	if r.Method != "POST" || n != 1 || header(r, "Content-Type") != "application/x-www-form-urlencoded" {
		t.Errorf("%s %v", r.Method, r.Headers)
	}
	_, err = Parse([]byte("urls:\n  - path: /\n    weigth: 3\n    bodyy: x\n"))
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), `unknown field "weigth"`) || strings.Contains(err.Error(), "urlfile.") {
		t.Errorf("unknown fields: %v", err)
	}
}

// A typo gets the nearest field's name, among the fields of where it is (a URL, the login, the file); a YAML
// syntax error is reported on its own line, with that line.
func TestErrorsNameTheFieldAndTheLine(t *testing.T) {
	for _, c := range []struct{ file, want string }{
		{"urls:\n  - path: /\n    wieght: 3\n", `line 3: unknown field "wieght" (did you mean weight?)`},
		{"urls:\n  - path: /\n    bodyfile: x\n", `(did you mean body_file?)`},
		{"login:\n  path: /login\n  expect_cooky: x\nurls:\n  - path: /\n", `line 3: unknown field "expect_cooky" (did you mean expect_cookie?)`},
		{"url:\n  - path: /\n", `line 1: unknown field "url" (did you mean urls?)`},
		{"urls:\n  - path: /\n    zzzzzz: 1\n", `(the fields: path, method, headers, cookies, body, body_file, form, json, weight, expect, anonymous)`},
		{"urls:\n  - path: /\n   weight: 3\n  - path: /x\n", `line 3: did not find expected '-' indicator: "   weight: 3"`},
		{"urls:\n  - path: /\n    weight: [3\n", `line 3: did not find expected ',' or ']'`},
		{"urls:\n  - path: /\n\tweight: 3\n", `line 3: found a tab character`},
		{"# a comment\nurls:\n  - path: /a\n  - path: /b\n    form: {a: b\n  - path: /c\n", `line 5: `},
	} {
		_, err := Parse([]byte(c.file))
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v, want %q", c.file, err, c.want)
		}
	}
}
