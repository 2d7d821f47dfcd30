package tune

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/stack"
)

// TestKeepLogin: a login's mix, with the session's cookies, is kept in the options for what runs after; a
// failed login keeps the mix as it was, and no login stays none.
func TestKeepLogin(t *testing.T) {
	var o Options
	if o.KeepLogin(); o.LogIn != nil {
		t.Fatal("KeepLogin made a login where there was none")
	}
	logged := []load.MixItem{{URI: "/account", Weight: 1}}
	fail := false
	o = Options{URLs: []load.MixItem{{URI: "/", Weight: 1}}, LogIn: func(context.Context, string) ([]load.MixItem, error) {
		if fail {
			return nil, errors.New("no session")
		}
		return logged, nil
	}}
	o.KeepLogin()
	run := o // tune.Run is given a copy
	if urls, err := run.LogIn(context.Background(), "http://127.0.0.1:1"); err != nil || len(urls) != 1 || o.URLs[0].URI != "/account" {
		t.Errorf("login: %v, %v; the options keep %v, want the session's /account", urls, err, o.URLs)
	}
	fail, o.URLs = true, []load.MixItem{{URI: "/", Weight: 1}}
	if _, err := run.LogIn(context.Background(), "http://127.0.0.1:1"); err == nil || o.URLs[0].URI != "/" {
		t.Errorf("a failed login: %v; the options keep %v, want the mix as it was", err, o.URLs)
	}
}

// TestProfileAfterWarns: a profile that cannot run is a warning in the result, not the run's error; an
// interrupted one is the run's error.
func TestProfileAfterWarns(t *testing.T) {
	o := Options{Stack: stack.Config{App: filepath.Join(t.TempDir(), "none"), PHPFPM: "/nonexistent/php-fpm"},
		URLs: []load.MixItem{{URI: "/", Weight: 1}}}
	res := &Result{}
	if err := ProfileAfter(context.Background(), o, res, func(string, string) {}); err != nil {
		t.Fatalf("a profile that cannot run: %v, want a warning", err)
	}
	if len(res.Warnings) != 1 || !strings.HasPrefix(res.Warnings[0], "tune --profile: ") {
		t.Errorf("warnings %q, want the profile's failure", res.Warnings)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res = &Result{}
	if err := ProfileAfter(ctx, o, res, func(string, string) {}); err == nil || len(res.Warnings) != 0 {
		t.Errorf("interrupted: %v, warnings %q; want the error and no warning", err, res.Warnings)
	}
}
