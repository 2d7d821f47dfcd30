package urlfile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/load"
)

// HasLogin says whether a login must be sent before the run.
func (m *Mix) HasLogin() bool { return m.login != nil }

// Session is the mix's login as a run sends it, nil without one: LogIn, where a failed login is the user's to
// fix (exit 2) and an interrupted one is not.
func (m *Mix) Session() func(ctx context.Context, base string) ([]load.MixItem, error) {
	if !m.HasLogin() {
		return nil
	}
	return func(ctx context.Context, base string) ([]load.MixItem, error) {
		in, err := m.LogIn(ctx, base)
		if err != nil && ctx.Err() == nil {
			return nil, exitcode.WithCode(exitcode.Usage, err)
		} else if err != nil {
			return nil, ctx.Err()
		}
		return in, nil
	}
}

// SessionAmid is Session for a command's whole mix, the file's URLs between before (--url entries) and after
// (an access log's, sent as logged, without cookies): that mix, the file's URLs logged in. Nil without a login.
func (m *Mix) SessionAmid(before, after []load.MixItem) func(ctx context.Context, base string) ([]load.MixItem, error) {
	in := m.Session()
	if in == nil {
		return nil
	}
	return func(ctx context.Context, base string) ([]load.MixItem, error) {
		logged, err := in(ctx, base)
		if err != nil {
			return nil, err
		}
		return append(append(slices.Clone(before), logged...), after...), nil
	}
}

// LogIn sends the login to base (http://HOST:PORT, the served app) and returns the mix with its cookies on every
// URL that takes them; without a login, the mix as it is. Once per run: sessions live in the app's store (its
// database, PHP's session files), not in the server processes that a tune restarts.
func (m *Mix) LogIn(ctx context.Context, base string) ([]load.MixItem, error) {
	if m.login == nil {
		return m.Items, nil
	}
	set, err := m.send(ctx, base)
	if err != nil {
		return nil, err
	}
	session := cookieString(set)
	out := slices.Clone(m.Items)
	for i := range out {
		if m.session[i] {
			r := *out[i].Request
			r.Headers = addCookies(r.Headers, session)
			out[i].Request = &r
		}
	}
	return out, nil
}

// send sends the login (no redirect followed: a login answers with its cookies and a redirect) and returns the
// cookies the session needs: those it was sent with, then those it set.
func (m *Mix) send(ctx context.Context, base string) (map[string]string, error) {
	r, l := m.loginRq, m.login
	what := "login " + r.Method + " " + l.Path
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, r.Method, strings.TrimSuffix(base, "/")+l.Path, bytes.NewReader(r.Body))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	for _, h := range r.Headers {
		if strings.EqualFold(h[0], "Host") {
			req.Host = h[1]
		} else {
			req.Header.Add(h[0], h[1])
		}
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer resp.Body.Close()
	head, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
	if l.ExpectStatus != 0 && resp.StatusCode != l.ExpectStatus {
		return nil, fmt.Errorf("%s answered %d, not %d (%q): check the credentials", what, resp.StatusCode, l.ExpectStatus, bytes.TrimSpace(head))
	}
	if resp.StatusCode >= 400 {
		return nil, fmt.Errorf("%s: status %d (%q): check the login in the URL file", what, resp.StatusCode, bytes.TrimSpace(head))
	}
	jar := map[string]string{}
	for k, v := range l.Cookies {
		jar[k] = v
	}
	var names []string
	for _, ck := range resp.Cookies() {
		if ck.MaxAge < 0 || (!ck.Expires.IsZero() && ck.Expires.Before(time.Now())) {
			delete(jar, ck.Name) // a cookie the login deletes
			continue
		}
		jar[ck.Name] = ck.Value
		names = append(names, ck.Name)
	}
	return jar, checkSet(what, l.ExpectCookie, names)
}

// checkSet says when the login did not set the session's cookie: a failed login usually answers 200 with the
// form again, so the status cannot tell.
func checkSet(what, want string, names []string) error {
	if len(names) == 0 {
		return errors.New(what + " set no cookie: check the credentials and the form's field names")
	}
	if want == "" {
		return nil
	}
	for _, n := range names {
		if strings.HasPrefix(n, want) {
			return nil
		}
	}
	return fmt.Errorf("%s set no cookie named %s* (it set %s): check the credentials", what, want, strings.Join(names, ", "))
}
