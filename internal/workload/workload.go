// Package workload holds phptune's workload presets: real PHP applications from Debian packages (and the
// bundled demo), each prepared in one step into a directory of its own, with the URLs to load, a content
// marker per URL and the services (a private database) the app needs while it is served.
package workload

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/suggest"
)

// ManifestName is the file that marks a prepared workload directory; it is written last.
const ManifestName = "phptune-workload.json"

// URL is one entry of a preset's request mix.
type URL struct {
	Path   string `json:"path"`
	Weight int    `json:"weight"`
	// Marker is a regular expression the response body must match: a page that lost its content (a database
	// error page is a fast 200) must never be measured as the app.
	Marker string `json:"marker"`
	// Session: sent with the cookies of the preset's Login (a page only a logged-in user sees).
	Session bool `json:"session,omitempty"`
}

// Login is how a preset's logged-in pages get their session: a form posted once before a run. The password is
// the one provisioning made, read from PasswordFile in the workload directory (0600) into the field PasswordField.
type Login struct {
	Path          string            `json:"path"`
	Form          map[string]string `json:"form"`
	Cookies       map[string]string `json:"cookies,omitempty"`
	ExpectCookie  string            `json:"expect_cookie"`
	PasswordFile  string            `json:"password_file"`
	PasswordField string            `json:"password_field"`
}

// Preset is one application phptune can prepare and serve by name.
type Preset struct {
	Name     string
	Summary  string
	Packages []string // Debian packages it needs, installed by Prepare when missing
	Services []string // services it starts while served, for the listing
	Front    string   // front controller, relative to the docroot
	URLs     []URL
	// Login, when set, logs in once before a run for the URLs marked Session.
	Login *Login
	// Writable are paths relative to the docroot that the workers must be able to write (caches, data).
	Writable []string
	// Embedded is the app itself when it ships inside the binary (the demo): nothing to prepare.
	Embedded fs.FS
	// Revision changes when the preset's provisioning changes, so that an older preparation is redone.
	Revision int

	// provision builds the app in p.Dir (a staging directory, renamed into place on success).
	provision func(ctx context.Context, p *Prep) error
	// start starts the app's services for a prepared directory; nil when it has none.
	start func(ctx context.Context, dir string) (*Services, error)
}

// Prep is what a provisioning step works with.
type Prep struct {
	Dir    string // staging directory; the docroot goes in Dir/docroot
	Final  string // the directory it becomes
	Log    io.Writer
	Preset *Preset
}

// Docroot is the staging docroot.
func (p *Prep) Docroot() string { return filepath.Join(p.Dir, "docroot") }

// Manifest describes a prepared workload.
type Manifest struct {
	Schema         string    `json:"schema"`
	Name           string    `json:"name"`
	Revision       int       `json:"revision"`
	Docroot        string    `json:"docroot"` // relative to the workload directory
	Front          string    `json:"front"`
	URLs           []URL     `json:"urls"`
	Login          *Login    `json:"login,omitempty"`
	Writable       []string  `json:"writable,omitempty"`
	Packages       []string  `json:"packages,omitempty"`
	Services       []string  `json:"services,omitempty"`
	PreparedAt     time.Time `json:"prepared_at"`
	PrepareSeconds float64   `json:"prepare_seconds"`
}

// Prepared is a workload ready to serve.
type Prepared struct {
	Preset   *Preset
	Dir      string // "" for an embedded app
	Manifest Manifest
}

// Docroot is the prepared docroot ("" for an embedded app).
func (w *Prepared) Docroot() string {
	if w.Dir == "" {
		return ""
	}
	return filepath.Join(w.Dir, w.Manifest.Docroot)
}

// StartServices starts the app's services (none for most presets). Stop the result on every path.
func (w *Prepared) StartServices(ctx context.Context) (*Services, error) {
	if w.Preset.start == nil {
		return &Services{}, nil
	}
	return w.Preset.start(ctx, w.Dir)
}

// Presets lists every preset, in the order the issue ranks them.
func Presets() []*Preset {
	return []*Preset{demoPreset(), dokuwikiPreset(), wordpressPreset(), laravelPreset(), symfonyPreset(), mediawikiPreset()}
}

// Names lists the presets' names.
func Names() []string {
	var names []string
	for _, p := range Presets() {
		names = append(names, p.Name)
	}
	return names
}

// Lookup finds a preset by name; an unknown name is a usage error that lists the known ones.
func Lookup(name string) (*Preset, error) {
	for _, p := range Presets() {
		if p.Name == name {
			return p, nil
		}
	}
	return nil, exitcode.UsageErrorf("no workload preset %q%s: the presets are %s (phptune workload list)", name,
		suggest.Phrase(name, Names()), strings.Join(Names(), ", "))
}

// DataDir is where presets are prepared by default: $XDG_DATA_HOME/phptune/workloads, or
// ~/.local/share/phptune/workloads.
func DataDir() (string, error) {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "phptune", "workloads"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", exitcode.UsageErrorf("no data directory: set XDG_DATA_HOME or HOME, or pass --dir")
	}
	return filepath.Join(home, ".local", "share", "phptune", "workloads"), nil
}

// DefaultDir is the preset's directory under the data dir.
func (p *Preset) DefaultDir() (string, error) {
	d, err := DataDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, p.Name), nil
}

// Open returns the preset prepared in dir ("" = the default directory); not being prepared is a usage error
// that says how to prepare it.
func (p *Preset) Open(dir string) (*Prepared, error) {
	if p.Embedded != nil {
		return &Prepared{Preset: p, Manifest: p.manifest()}, nil
	}
	if dir == "" {
		var err error
		if dir, err = p.DefaultDir(); err != nil {
			return nil, err
		}
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	m, err := ReadManifest(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, exitcode.UsageErrorf("workload %s is not prepared in %s: run phptune workload prepare %s", p.Name, dir, p.Name)
		}
		return nil, exitcode.UsageErrorf("workload %s in %s: %v: prepare it again (phptune workload prepare %s)", p.Name, dir, err, p.Name)
	}
	if m.Name != p.Name {
		return nil, exitcode.UsageErrorf("%s holds workload %q, not %q", dir, m.Name, p.Name)
	}
	if m.Revision != p.Revision {
		return nil, exitcode.UsageErrorf("workload %s in %s was prepared by another phptune version: run phptune workload prepare %s", p.Name, dir, p.Name)
	}
	return &Prepared{Preset: p, Dir: dir, Manifest: *m}, nil
}

// OpenDir opens a prepared workload directory (one holding a manifest), whatever its preset.
func OpenDir(dir string) (*Prepared, error) {
	m, err := ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	p, err := Lookup(m.Name)
	if err != nil {
		return nil, err
	}
	return p.Open(dir)
}

// ReadManifest reads dir's manifest.
func ReadManifest(dir string) (*Manifest, error) {
	data, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("read %s: %w", ManifestName, err)
	}
	if m.Schema != "phptune/workload/v1" {
		return nil, fmt.Errorf("%s: schema %q is not phptune/workload/v1", ManifestName, m.Schema)
	}
	return &m, nil
}

func (p *Preset) manifest() Manifest {
	front := p.Front
	if front == "" {
		front = "index.php"
	}
	return Manifest{Schema: "phptune/workload/v1", Name: p.Name, Revision: p.Revision, Docroot: "docroot", Front: front,
		URLs: p.URLs, Login: p.Login, Writable: p.Writable, Packages: p.Packages, Services: p.Services}
}

// Listing is a preset as workload list shows it (schema phptune/workloads/v1's presets).
type Listing struct {
	Name     string   `json:"name"`
	Summary  string   `json:"summary"`
	Packages []string `json:"packages"`
	Services []string `json:"services"`
	Prepared bool     `json:"prepared"`
	Where    string   `json:"where"`
	URLs     []URL    `json:"urls"`
}

// List lists the presets, each with whether it is prepared in its default place and where.
func List() []Listing {
	var rows []Listing
	for _, p := range Presets() {
		ok, where := p.Status("")
		rows = append(rows, Listing{p.Name, p.Summary, p.Packages, p.Services, ok, where, p.URLs})
	}
	return rows
}

// Status says whether the preset is prepared in dir ("" = the default directory).
func (p *Preset) Status(dir string) (prepared bool, where string) {
	if p.Embedded != nil {
		return true, "embedded in the binary"
	}
	if dir == "" {
		var err error
		if dir, err = p.DefaultDir(); err != nil {
			return false, ""
		}
	}
	_, err := p.Open(dir)
	return err == nil, dir
}

// Prepare installs the preset's missing Debian packages, provisions the app into dir ("" = the default
// directory) through a staging directory that is renamed into place only when every step succeeded, and
// writes the manifest. Preparing an already prepared workload does nothing but say so.
func (p *Preset) Prepare(ctx context.Context, dir string, log io.Writer) (w *Prepared, already bool, err error) {
	if p.Embedded != nil {
		fmt.Fprintf(log, "%s is embedded in phptune: nothing to prepare\n", p.Name)
		w, err := p.Open("")
		return w, true, err
	}
	if dir == "" {
		if dir, err = p.DefaultDir(); err != nil {
			return nil, false, err
		}
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return nil, false, err
	}
	if w, err := p.Open(dir); err == nil {
		return w, true, nil
	}
	if st, err := os.Stat(dir); err == nil {
		if !st.IsDir() {
			return nil, false, exitcode.UsageErrorf("--dir %s: not a directory", dir)
		}
		// A directory of this preset from an older revision is redone; anything else is not ours to replace.
		if m, merr := ReadManifest(dir); merr != nil {
			if entries, _ := os.ReadDir(dir); len(entries) > 0 {
				return nil, false, exitcode.UsageErrorf("%s exists and is not a prepared workload: remove it or pass another --dir", dir)
			}
		} else if m.Name != p.Name {
			return nil, false, exitcode.UsageErrorf("%s holds workload %s, not %s: pass another --dir", dir, m.Name, p.Name)
		}
	}
	start := time.Now()
	if err := installPackages(ctx, p.Packages, log); err != nil {
		return nil, false, err
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, false, fmt.Errorf("create %s: %w", filepath.Dir(dir), err)
	}
	staging := dir + ".partial"
	if err := os.RemoveAll(staging); err != nil {
		return nil, false, fmt.Errorf("remove an earlier attempt %s: %w", staging, err)
	}
	if err := os.Mkdir(staging, 0o755); err != nil {
		return nil, false, fmt.Errorf("create %s: %w", staging, err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(staging)
		}
	}()
	prep := &Prep{Dir: staging, Final: dir, Log: log, Preset: p}
	if err := p.provision(ctx, prep); err != nil {
		if ctx.Err() != nil {
			return nil, false, ctx.Err()
		}
		return nil, false, fmt.Errorf("prepare %s: %w", p.Name, err)
	}
	m := p.manifest()
	m.PreparedAt = time.Now().UTC().Round(time.Second)
	m.PrepareSeconds = time.Since(start).Seconds()
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, false, err
	}
	if err := writeFile(filepath.Join(staging, ManifestName), append(data, '\n'), 0o644); err != nil {
		return nil, false, err
	}
	if err := os.RemoveAll(dir); err != nil {
		return nil, false, fmt.Errorf("replace %s: %w", dir, err)
	}
	if err := os.Rename(staging, dir); err != nil {
		return nil, false, fmt.Errorf("move %s into place: %w", staging, err)
	}
	w, err = p.Open(dir)
	return w, false, err
}

// Compile turns the URLs' markers into regular expressions.
func Compile(urls []URL) ([]*regexp.Regexp, error) {
	out := make([]*regexp.Regexp, len(urls))
	for i, u := range urls {
		re, err := regexp.Compile(u.Marker)
		if err != nil {
			return nil, fmt.Errorf("marker of %s: %w", u.Path, err)
		}
		out[i] = re
	}
	return out, nil
}

// Needs is a one-line description of what the preset needs, for the listing.
func (p *Preset) Needs() string {
	var parts []string
	if len(p.Packages) > 0 {
		pk := append([]string(nil), p.Packages...)
		sort.Strings(pk)
		parts = append(parts, strings.Join(pk, " "))
	}
	if len(p.Services) > 0 {
		parts = append(parts, "runs "+strings.Join(p.Services, ", "))
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, "; ")
}
