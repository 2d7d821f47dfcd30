package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/stack"
	"github.com/phptune/phptune/internal/urlfile"
	"github.com/phptune/phptune/internal/workload"
)

// appSpec is what an APP argument names: a docroot, a workload preset by name (the demo when omitted), or a
// prepared workload directory.
type appSpec struct {
	cfg  stack.Config
	name string
	// urls is the preset's mix, each URL with its content marker, without its logged-in pages; nil for a plain
	// docroot.
	urls []load.MixItem
	// withLogin is the preset's whole mix, logged-in pages and the login, for the commands that can log in
	// (tune); nil when it has none.
	withLogin *urlfile.File
	workload  *workload.Prepared
}

// resolveApp resolves the APP argument. A directory wins over a preset of the same name, as a path typed on
// purpose should.
func resolveApp(args []string) (*appSpec, error) {
	if len(args) == 0 {
		return presetApp("demo")
	}
	arg := args[0]
	if st, err := os.Stat(arg); err == nil && st.IsDir() {
		if _, err := os.Stat(filepath.Join(arg, workload.ManifestName)); err == nil {
			w, err := workload.OpenDir(arg)
			if err != nil {
				return nil, exitcode.WithCode(exitcode.Usage, fmt.Errorf("workload dir %s: %w", arg, err))
			}
			return preparedApp(w)
		}
		return &appSpec{cfg: stack.Config{App: arg}, name: arg}, nil
	}
	if _, err := workload.Lookup(arg); err == nil {
		return presetApp(arg)
	}
	if strings.ContainsAny(arg, "/.") {
		return nil, exitcode.UsageErrorf("app %q: not a directory: give the docroot of a PHP application, or a workload preset (%s)", arg, strings.Join(workload.Names(), ", "))
	}
	return nil, exitcode.UsageErrorf("app %q: neither a directory nor a workload preset: the presets are %s (phptune workload list)", arg, strings.Join(workload.Names(), ", "))
}

func presetApp(name string) (*appSpec, error) {
	p, err := workload.Lookup(name)
	if err != nil {
		return nil, err
	}
	w, err := p.Open("")
	if err != nil {
		return nil, err
	}
	return preparedApp(w)
}

func preparedApp(w *workload.Prepared) (*appSpec, error) {
	a := &appSpec{workload: w, name: w.Preset.Name}
	if w.Preset.Embedded != nil {
		a.cfg.AppFS = w.Preset.Embedded
		if w.Preset.Name == "demo" {
			a.name = "demo app"
		}
	} else {
		a.cfg.App = w.Docroot()
		a.name = fmt.Sprintf("%s (%s)", w.Preset.Name, w.Dir)
	}
	a.cfg.Front = w.Manifest.Front
	a.cfg.Writable = w.Manifest.Writable
	// A prepared tree is never edited while served: hard links spare copying it for every stack.
	a.cfg.LinkFiles = w.Dir != ""
	res, err := workload.Compile(w.Manifest.URLs)
	if err != nil {
		return nil, fmt.Errorf("workload %s: %w", w.Preset.Name, err)
	}
	for i, u := range w.Manifest.URLs {
		if !u.Session {
			a.urls = append(a.urls, load.MixItem{URI: u.Path, Weight: u.Weight, ExpectBody: res[i]})
		}
	}
	if a.withLogin, err = loginMix(w); err != nil {
		return nil, err
	}
	return a, nil
}

// loginMix is a prepared preset's mix with its login, as a URL file would give it (nil without a login).
func loginMix(w *workload.Prepared) (*urlfile.File, error) {
	l := w.Manifest.Login
	if l == nil {
		return nil, nil
	}
	pw, err := os.ReadFile(filepath.Join(w.Dir, l.PasswordFile))
	if err != nil {
		return nil, exitcode.UsageErrorf("workload %s: %v: prepare it again (phptune workload prepare %s)", w.Preset.Name, err, w.Preset.Name)
	}
	form := map[string]string{l.PasswordField: strings.TrimSpace(string(pw))}
	for k, v := range l.Form {
		form[k] = v
	}
	f := &urlfile.File{Login: &urlfile.Login{Request: urlfile.Request{Path: l.Path, Form: form, Cookies: l.Cookies},
		ExpectCookie: l.ExpectCookie}}
	for _, u := range w.Manifest.URLs {
		f.URLs = append(f.URLs, urlfile.URL{Request: urlfile.Request{Path: u.Path}, Weight: u.Weight, Expect: u.Marker, Anonymous: !u.Session})
	}
	return f, nil
}

// startServices starts the app's own services (a preset's database); the result is never nil and must be
// stopped on every path.
func (a *appSpec) startServices(ctx context.Context) (*workload.Services, error) {
	if a.workload == nil {
		return &workload.Services{}, nil
	}
	svc, err := a.workload.StartServices(ctx)
	if err != nil {
		return &workload.Services{}, fmt.Errorf("start the services of %s: %w", a.workload.Preset.Name, err)
	}
	return svc, nil
}

// firstURL is the app's first URL and its marker (the path "/" and no marker for a plain docroot).
func (a *appSpec) firstURL() (string, *regexp.Regexp) {
	if len(a.urls) == 0 {
		return "/", nil
	}
	return a.urls[0].URI, a.urls[0].ExpectBody
}

// errServiceDied is the cause of a run's context when one of the app's services exits under it.
var errServiceDied = errors.New("a service of the app exited")

// watchServices returns ctx, cancelled with a cause naming the service should one of svc exit under the run: a
// run must not go on measuring an app whose database is gone (its pages would turn into fast error pages).
// died reports that error once it happened (nil otherwise); stop ends the watch.
func watchServices(ctx context.Context, svc *workload.Services) (run context.Context, died func() error, stop func()) {
	run, cancel := context.WithCancelCause(ctx)
	names := strings.Join(svc.Names, ", ")
	done := make(chan struct{})
	go func() {
		select {
		case <-svc.Exited():
			cancel(fmt.Errorf("%w unexpectedly (%s): the results so far are kept; start the run again", errServiceDied, names))
		case <-done:
		}
	}()
	died = func() error {
		if err := context.Cause(run); errors.Is(err, errServiceDied) {
			return exitcode.WithCode(exitcode.Failed, err)
		}
		return nil
	}
	return run, died, func() { close(done); cancel(nil) }
}
