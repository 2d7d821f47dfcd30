package workload

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
)

// App is what a command's APP argument names: a docroot, a workload preset by name (the demo when omitted), or a
// prepared workload directory.
type App struct {
	Stack stack.Config
	Name  string
	// URLs is the preset's mix, each URL with its content marker, without its logged-in pages; nil for a plain
	// docroot.
	URLs []load.MixItem
	// WithLogin is the preset's whole mix, logged-in pages and the login, for the commands that can log in
	// (tune); nil when it has none.
	WithLogin *urlfile.File
	Workload  *Prepared // nil for a plain docroot
}

// Resolve resolves the APP argument (none: the demo). A directory wins over a preset of the same name, as a
// path typed on purpose should.
func Resolve(args []string) (*App, error) {
	if len(args) == 0 {
		return PresetApp("demo")
	}
	arg := args[0]
	if st, err := os.Stat(arg); err == nil && st.IsDir() {
		if _, err := os.Stat(filepath.Join(arg, ManifestName)); err == nil {
			w, err := OpenDir(arg)
			if err != nil {
				return nil, exitcode.WithCode(exitcode.Usage, fmt.Errorf("workload dir %s: %w", arg, err))
			}
			return preparedApp(w)
		}
		return &App{Stack: stack.Config{App: arg}, Name: arg}, nil
	}
	if _, err := Lookup(arg); err == nil {
		return PresetApp(arg)
	}
	if strings.ContainsAny(arg, "/.") {
		return nil, exitcode.UsageErrorf("app %q: not a directory: give the docroot of a PHP application, or a workload preset (%s)", arg, strings.Join(Names(), ", "))
	}
	return nil, exitcode.UsageErrorf("app %q: neither a directory nor a workload preset: the presets are %s (phptune workload list)", arg, strings.Join(Names(), ", "))
}

// PresetApp is the app of the workload preset name, prepared (the demo needs no preparing).
func PresetApp(name string) (*App, error) {
	p, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	w, err := p.Open("")
	if err != nil {
		return nil, err
	}
	return preparedApp(w)
}

func preparedApp(w *Prepared) (*App, error) {
	a := &App{Workload: w, Name: w.Preset.Name}
	if w.Preset.Embedded != nil {
		a.Stack.AppFS = w.Preset.Embedded
		if w.Preset.Name == "demo" {
			a.Name = "demo app"
		}
	} else {
		a.Stack.App = w.Docroot()
		a.Name = fmt.Sprintf("%s (%s)", w.Preset.Name, w.Dir)
	}
	a.Stack.Front = w.Manifest.Front
	a.Stack.Writable = w.Manifest.Writable
	// A prepared tree is never edited while served: hard links spare copying it for every stack.
	a.Stack.LinkFiles = w.Dir != ""
	res, err := Compile(w.Manifest.URLs)
	if err != nil {
		return nil, fmt.Errorf("workload %s: %w", w.Preset.Name, err)
	}
	for i, u := range w.Manifest.URLs {
		if !u.Session {
			a.URLs = append(a.URLs, load.MixItem{URI: u.Path, Weight: u.Weight, ExpectBody: res[i]})
		}
	}
	if a.WithLogin, err = loginMix(w); err != nil {
		return nil, err
	}
	return a, nil
}

// loginMix is a prepared preset's mix with its login, as a URL file would give it (nil without a login).
func loginMix(w *Prepared) (*urlfile.File, error) {
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

// StartServices starts the app's own services (a preset's database); the result is never nil and must be
// stopped on every path.
func (a *App) StartServices(ctx context.Context) (*Services, error) {
	if a.Workload == nil {
		return &Services{}, nil
	}
	svc, err := a.Workload.StartServices(ctx)
	if err != nil {
		return &Services{}, fmt.Errorf("start the services of %s: %w", a.Workload.Preset.Name, err)
	}
	return svc, nil
}

// Mix is the app's own mix sent as req: a preset's with its logged-in pages and the login (sent on the first
// stack), else its URLs with their markers, else / checked against check.
func (a *App) Mix(req load.Request, check *regexp.Regexp) ([]load.MixItem, func(ctx context.Context, base string) ([]load.MixItem, error), error) {
	switch {
	case a.WithLogin != nil:
		fm, err := a.WithLogin.Mix(req, nil)
		if err != nil {
			return nil, nil, err
		}
		return fm.Items, fm.Session(), nil
	case a.URLs != nil:
		return a.URLs, nil, nil
	}
	return []load.MixItem{{URI: "/", Weight: 1, ExpectBody: check}}, nil, nil
}

// Paths is the app's URLs without their markers (profile's default mix: it checks no body), else / alone.
func (a *App) Paths() []load.MixItem {
	var items []load.MixItem
	for _, u := range a.URLs {
		items = append(items, load.MixItem{URI: u.URI, Weight: u.Weight})
	}
	if len(items) == 0 {
		return []load.MixItem{{URI: "/", Weight: 1}}
	}
	return items
}

// FirstURL is the app's first URL and its marker (the path "/" and no marker for a plain docroot).
func (a *App) FirstURL() (string, *regexp.Regexp) {
	if len(a.URLs) == 0 {
		return "/", nil
	}
	return a.URLs[0].URI, a.URLs[0].ExpectBody
}

// errServiceDied is the cause of a run's context when one of the app's services exits under it.
var errServiceDied = errors.New("a service of the app exited")

// During runs f with a context that ends should one of s exit under it: a run must not go on measuring an app
// whose database is gone (its pages would turn into fast error pages). The error is then the service's death
// (ServiceDied), in place of what f made of its cancellation; else f's own.
func (s *Services) During(ctx context.Context, f func(context.Context) error) error {
	run, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	names := strings.Join(s.Names, ", ") // read now: Stop clears it
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-s.Exited():
			cancel(fmt.Errorf("%w unexpectedly (%s): the results so far are kept; start the run again", errServiceDied, names))
		case <-done:
		}
	}()
	err := f(run)
	if cause := context.Cause(run); errors.Is(cause, errServiceDied) {
		return exitcode.WithCode(exitcode.Failed, cause)
	}
	return err
}

// ServiceDied says whether err is a service's death under During.
func ServiceDied(err error) bool { return errors.Is(err, errServiceDied) }
