package apply

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/phptune/phptune/internal/atomicfile"
	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/phpini"
	"github.com/phptune/phptune/internal/stack"
	"github.com/phptune/phptune/internal/suggest"
)

// ApplyName is the run dir's file that says how to apply the recommendation.
const ApplyName = "apply.txt"

// From are the files the recommendation starts from as the user named them ("" when not given): --from-pool
// (with php-fpm's --prefix for its relative includes), --from-ini and --from-site; Docroot is the app's, whose
// site nginx's own configuration may name.
type From struct{ Pool, Prefix, INI, Site, Docroot string }

// Servers are the binaries that read the files and check them (-t) ("": the default one).
type Servers struct{ PHPFPM, Nginx, Apache string }

// Request is what Write makes into files.
type Request struct {
	Rec    knob.Config
	From   From
	Target Target // its Version is PHPVersion's
	Header []string
	// Servers check the files; Banner is php-fpm -v's first line, for the version of a php-fpm whose name has none.
	Servers Servers
	Banner  string
	// Steps writes how to apply the plan whose files are in dir (apply.txt).
	Steps func(w io.Writer, p *Plan, dir string)
}

// Write writes the recommendation as files for a Debian server into dir, each the starting configuration's
// file (Debian's pool, or --from-pool's and --from-ini's) with the changes made in place and checked by the
// server that will read it, with their diffs (changes.diff) and how to apply them (apply.txt). files are the
// names written with their paths.
func Write(ctx context.Context, dir string, r Request) (plan *Plan, files map[string]string, err error) {
	fpm, err := stack.FindPHPFPM(r.Servers.PHPFPM)
	if err != nil {
		return nil, nil, err
	}
	ngx, err := stack.FindNginx(r.Servers.Nginx)
	if err != nil {
		return nil, nil, err
	}
	t := r.Target
	if t.Version, err = PHPVersion(fpm, r.Banner); err != nil {
		return nil, nil, err
	}
	start, err := ReadStart(t.Version, r.From)
	if err != nil {
		return nil, nil, err
	}
	if plan, err = Make(r.Rec, start, t, r.Header); err != nil {
		return nil, nil, err
	}
	texts := map[string]string{}
	var names []string
	for _, f := range plan.Files {
		texts[f.Name] = f.Text
		names = append(names, f.Name)
	}
	if _, ok := texts[PoolName]; ok {
		if err := stack.CheckFPMPool(ctx, fpm, plan.PoolCheck); err != nil {
			return nil, nil, fmt.Errorf("the pool as the changed files make it: %w", err)
		}
	}
	if err := checkNginx(ctx, ngx, texts, r.Rec); err != nil {
		return nil, nil, err
	}
	if err := checkApache(ctx, r.Servers.Apache, texts, r.Rec); err != nil {
		return nil, nil, err
	}
	var steps bytes.Buffer
	r.Steps(&steps, plan, dir)
	texts[DiffName], texts[ApplyName] = plan.Diffs(), steps.String()
	files = map[string]string{}
	for _, name := range append(names, DiffName, ApplyName) {
		if err := atomicfile.Save(filepath.Join(dir, name), []byte(texts[name])); err != nil {
			return nil, nil, err
		}
		files[name] = filepath.Join(dir, name)
	}
	return plan, files, nil
}

// checkNginx runs nginx -t on the upstream with the user's site as changed, else with a location that has the
// lines the plan gives the site.
func checkNginx(ctx context.Context, ngx string, files map[string]string, rec knob.Config) error {
	up, ok := files[NginxName]
	if !ok {
		return nil
	}
	if site, ok := files[NginxSiteName]; ok {
		if err := stack.CheckNginxSite(ctx, ngx, "/etc/nginx", up, site); err != nil {
			return fmt.Errorf("the nginx site as changed: %w", err)
		}
		return nil
	}
	if err := stack.CheckNginxUpstream(ctx, ngx, up, rec.Location()); err != nil {
		return fmt.Errorf("generated nginx snippet: %w", err)
	}
	return nil
}

// checkApache runs apache2 -t on an Apache recommendation's site and MPM file, with the modules they need.
func checkApache(ctx context.Context, apache string, files map[string]string, rec knob.Config) error {
	site, ok := files[SiteName]
	if !ok {
		return nil
	}
	bin, err := stack.FindApache(apache)
	if err != nil {
		return err
	}
	if err := stack.CheckApacheSite(ctx, bin, rec.Server == knob.ApacheModPHP, site, files[MPMName]); err != nil {
		return fmt.Errorf("generated Apache site: %w", err)
	}
	return nil
}

// FileNames lists the files Write wrote, in the order a reader takes them, for a run's last words.
func FileNames(files map[string]string) []string {
	var names []string
	for _, n := range []string{PoolName, ININame, NginxName, SiteName, MPMName, DiffName, ApplyName} {
		if _, ok := files[n]; ok {
			names = append(names, n)
		}
	}
	return names
}

// ReadStart reads the files the recommendation changes: --from-pool's (a pool file, or php-fpm.conf with its
// includes), else Debian's php-fpm.conf and pools for this PHP when the package put them there; --from-ini's;
// --from-site's, else the site nginx serves the docroot from, else Debian's default site when it is enabled.
func ReadStart(version string, from From) (Start, error) {
	s := Start{Prefix: from.Prefix}
	s.Pool.Path = from.Pool
	if from.Pool == "" {
		s.Pool.Path = DebianMain(version)
	}
	b, err := os.ReadFile(s.Pool.Path)
	switch {
	case err == nil:
		s.Pool.Text = string(b)
	case from.Pool != "":
		return s, exitcode.UsageErrorf("--from-pool: %v", err)
	default:
		s.Pool.Path = "" // no Debian pool here: the pool is written whole
	}
	if from.INI != "" {
		b, err := os.ReadFile(from.INI)
		if err != nil {
			return s, exitcode.UsageErrorf("--from-ini: %v", err)
		}
		s.INI = File{Path: from.INI, Text: string(b)}
	}
	if s.Site, err = ReadSite(from.Site, from.Docroot); err != nil {
		return s, err
	}
	for _, f := range []*File{&s.Pool, &s.INI, &s.Site} {
		if f.Path != "" {
			f.Path, _ = filepath.Abs(f.Path)
		}
	}
	return s, nil
}

// ReadSite reads the nginx site the plan changes: --from-site's, else the one nginx's own configuration
// (nginx -T) serves docroot from, else Debian's default site when sites-enabled has it (a server that serves
// through it); none otherwise.
func ReadSite(fromSite, docroot string) (File, error) {
	path := fromSite
	if path == "" {
		path = servingSite(docroot)
	}
	if path == "" {
		if _, err := os.Stat("/etc/nginx/sites-enabled/default"); err != nil {
			return File{}, nil
		}
		path = DebianSite
	}
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		return File{Path: path, Text: string(b)}, nil
	case fromSite == "":
		return File{}, nil
	}
	why := err.Error()
	if pe, ok := err.(*os.PathError); ok {
		why = pe.Err.Error() // without the path os puts in front of it
	}
	return File{}, exitcode.UsageErrorf("--from-site %s: %v%s: give the nginx site that serves the app", fromSite,
		why, suggest.NearbyFile(fromSite))
}

// servingSite is the file of the host's nginx configuration with a server whose root is docroot, symlinks
// resolved (sites-enabled links to sites-available, which is the file to change); "" when nginx cannot say.
func servingSite(docroot string) string {
	if docroot == "" {
		return ""
	}
	abs, err := filepath.Abs(docroot)
	if err != nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "nginx", "-T").Output()
	if err != nil {
		return ""
	}
	path := SiteServing(string(out), abs)
	if real, err := filepath.EvalSymlinks(path); err == nil {
		return real
	}
	return path
}

// PHPVersion is PHP's major.minor, which names Debian's paths in the files (/etc/php/8.2/fpm): from Debian's
// binary name (php-fpm8.2), else from php-fpm -v's first line (a build's sbin/php-fpm names no version).
// Neither is an error rather than a guess: files for another version's paths would not be read.
func PHPVersion(fpm, banner string) (string, error) {
	if v := phpini.Version(fpm); v != "" {
		return v, nil
	}
	if v := phpini.BannerVersion(banner); v != "" {
		return v, nil
	}
	return "", fmt.Errorf("the PHP version of %s is unknown (its name is not php-fpmX.Y and -v said %q), so the files "+
		"cannot name /etc/php/X.Y: give Debian's php-fpm with --php-fpm /usr/sbin/php-fpmX.Y", fpm, banner)
}
