package phpbuild

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/experiment"
	"github.com/phptune/phptune/internal/stack"
	"github.com/phptune/phptune/internal/stats"
	"github.com/phptune/phptune/internal/textline"
	"github.com/phptune/phptune/internal/tune"
)

// Schema of the build result.
const Schema = "phptune/build/v1"

// DemoTrain and DemoHoldout are the demo app's training and held-out routes: the HTML pages to train on, the
// JSON API and the form to check that the gain does not come at other code's expense.
var (
	DemoTrain   = []string{"/", "/articles?page=2&sort=title", "/articles/7", "/articles?tag=php&sort=popular"}
	DemoHoldout = []string{"/api/articles?per_page=20", "/api/articles/5", "/contact", "/articles/99999"}
)

// DemoRoutes is every demo route: the held-out set when another app is trained on.
func DemoRoutes() []string { return append(append([]string{}, DemoTrain...), DemoHoldout...) }

// Options is one `phptune build` request.
type Options struct {
	CacheDir      string
	Debian        string // source package (php8.2); used when SourcePath is ""
	DebianVersion string
	SourcePath    string
	ConfigureArgs []string // nil = derived
	ProfFlags     string
	Variants      []string // default baseline, pgo

	App     fs.FS // the app trained on
	AppName string
	// AppDir, when set, is the app's docroot on disk (a prepared workload: its config names its own database
	// socket, its tree has symlinks), copied with its symlinks followed; App is then set to the copy.
	AppDir      string
	AppFront    string   // front controller relative to the docroot (default index.php)
	AppWritable []string // paths the workers may write when served (stack.Config.Writable)
	// Markers are the content checks of the app's URLs (a preset's): a training or timed response without its
	// marker is an error page (a database error page is a fast 200).
	Markers    map[string]*regexp.Regexp
	Train      []string
	HoldoutApp fs.FS // nil = App
	Holdout    []string
	TrainN     int // training repeats per URL
	// TrainMode is "cgi" (php-cgi -T) or "live" (php-cgi -T, then the instrumented php-fpm under load for
	// TrainDuration).
	TrainMode     string
	TrainDuration time.Duration
	JIT           bool

	Verify    bool
	Rounds    int
	Repeats   int
	Callgrind bool
	// HugeCodePages also verifies the pgo build with opcache.huge_code_pages=1, when a probe finds that its text
	// really lands on huge pages.
	HugeCodePages bool
	// ThroughputTrial, when > 0, also compares requests/s through php-fpm in interleaved trials of this length.
	ThroughputTrial time.Duration
	Debian8         bool   // include Debian's own php-cgi in the comparison even when the source is not older
	PHP             string // the installed php CLI for `php -m` (default php)

	InstallDeps bool
	Jobs        int
	Make        string
	SmokeApp    fs.FS // the demo app
	// Events (optional).
	OnStep func(variant, step string)
	Log    io.Writer // detailed log (build steps, smoke, rounds)
}

// VariantResult is one variant in the result.
type VariantResult struct {
	Name         string   `json:"name"`
	Prefix       string   `json:"prefix,omitempty"`
	Available    bool     `json:"available"`
	Reason       string   `json:"reason,omitempty"`
	Key          string   `json:"key,omitempty"`
	Cached       bool     `json:"cached"`
	BuildSeconds float64  `json:"build_seconds,omitempty"`
	Steps        []Step   `json:"steps,omitempty"`
	Warnings     []string `json:"warnings,omitempty"`
	LogDir       string   `json:"log_dir,omitempty"`
	PHPFPM       string   `json:"php_fpm,omitempty"`
	// Of and Setting: this arm is variant Of's binaries run with Setting on top (pgo+huge_code_pages).
	Of      string `json:"of,omitempty"`
	Setting string `json:"setting,omitempty"`

	TimePerReqUS map[string]float64    `json:"time_per_req_us,omitempty"`
	GainPct      map[string]float64    `json:"gain_pct,omitempty"`
	GainCIPct    map[string][2]float64 `json:"gain_ci_pct,omitempty"`
	IPR          map[string]float64    `json:"instructions_per_req,omitempty"`
	IPRChangePct map[string]float64    `json:"instructions_change_pct,omitempty"`
	Verdict      map[string]string     `json:"verdict,omitempty"`
	// Throughput through php-fpm on the training URLs (requests/s, positive gain = more).
	Throughput *ThroughputResult `json:"throughput,omitempty"`
}

// Result is the whole run.
type Result struct {
	Schema       string        `json:"schema"`
	Partial      bool          `json:"partial"`
	Source       Source        `json:"source"`
	InstalledPHP string        `json:"installed_php,omitempty"`
	Notes        []string      `json:"notes,omitempty"`
	Configure    []string      `json:"configure_args"`
	Extensions   ExtensionPlan `json:"extensions"`
	CacheDir     string        `json:"cache_dir"`
	App          string        `json:"app"`
	Train        []string      `json:"train_urls"`
	Holdout      []string      `json:"holdout_urls"`
	Guard        string        `json:"guard"`
	Rounds       int           `json:"rounds"`
	// Alpha is the error budget every verdict of the build shares (the verification's and the throughput
	// check's): they hold together at 1 - Alpha. 0 in results from before it was recorded.
	Alpha       float64          `json:"alpha,omitempty"`
	CPU         int              `json:"cpu"`
	Variants    []*VariantResult `json:"variants"`
	Environment *Environment     `json:"environment,omitempty"`
}

// Variant returns the named variant's result, or nil.
func (r *Result) Variant(name string) *VariantResult {
	for _, v := range r.Variants {
		if v.Name == name {
			return v
		}
	}
	return nil
}

// TuneBuilds are the variants built for tune --build, in variants' order, each taking seconds (the build step's
// wall time); a variant not built is an error that says why and names the build's log.
func (r *Result) TuneBuilds(variants []string, seconds float64, log string) ([]tune.Build, error) {
	var builds []tune.Build
	for _, name := range variants {
		v := r.Variant(name)
		if v == nil || !v.Available || v.PHPFPM == "" {
			why := "not built"
			if v != nil && v.Reason != "" {
				why = textline.First(v.Reason)
			}
			return nil, exitcode.WithCode(exitcode.Failed, fmt.Errorf("tune --build %s: %s (log %s)", name, why, log))
		}
		builds = append(builds, tune.Build{Variant: name, PHPFPM: v.PHPFPM, Cached: v.Cached, Seconds: seconds})
	}
	return builds, nil
}

// Run fetches the source, builds the variants, smoke-tests them and verifies the gain. On cancellation it
// returns what it has with Partial set and ctx's error.
func Run(ctx context.Context, o Options) (*Result, error) {
	log := o.Log
	if log == nil {
		log = io.Discard
	}
	if len(o.Variants) == 0 {
		o.Variants = []string{Baseline, PGO}
	}
	if o.PHP == "" {
		o.PHP = "php"
	}
	if o.ProfFlags == "" {
		o.ProfFlags = DefaultProfFlags
	}
	res := &Result{Schema: Schema, CacheDir: o.CacheDir, App: o.AppName, Train: o.Train, Holdout: o.Holdout, Environment: newEnvironment()}
	if err := os.MkdirAll(o.CacheDir, 0o755); err != nil {
		return res, fmt.Errorf("build cache %s: %w", o.CacheDir, err)
	}

	// The app, written out for php-cgi. A tree on disk is copied too (symlinks followed, files hard-linked
	// where the filesystem allows, the writable paths copied): training never writes into it, so its hash,
	// part of the cache key, stays put.
	appDir, err := os.MkdirTemp("", "phptune-build-app-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(appDir)
	app := App{Docroot: filepath.Join(appDir, "train"), Front: o.AppFront, Markers: o.Markers}
	if app.Front == "" {
		app.Front = "index.php"
	}
	if o.AppDir != "" {
		if err := stack.CopyTree(o.AppDir, app.Docroot, true, o.AppWritable); err != nil {
			return res, fmt.Errorf("copy the app %s: %w", o.AppDir, err)
		}
		o.App = os.DirFS(app.Docroot)
	} else if err := stack.CopyFS(o.App, app.Docroot); err != nil {
		return res, err
	} else if err := stack.DateBack(app.Docroot); err != nil {
		return res, err
	}

	// Extensions first: their -dev packages belong to the missing-package check.
	var plan ExtensionPlan
	if o.ConfigureArgs == nil {
		uses, err := ScanApp(o.App)
		if err != nil {
			return res, fmt.Errorf("scan the app: %w", err)
		}
		installed, err := InstalledModules(ctx, o.PHP)
		if err != nil {
			res.Notes = append(res.Notes, "no installed PHP to ask with php -m: extensions derived from the app's code alone")
		}
		devOK := DebInstalled
		if o.InstallDeps {
			devOK = func(string) bool { return true }
		}
		plan = PlanExtensions(installed, uses, devOK)
	}
	var devPkgs []string
	for _, n := range plan.Enabled {
		if p := extension(n).DevPkg; p != "" {
			devPkgs = append(devPkgs, p)
		}
	}
	missing := MissingPackages(devPkgs, o.Callgrind && o.Verify, exec.LookPath, DebInstalled)
	if o.InstallDeps && slices.Contains(o.Variants, PGOBOLT) {
		// Without --install-deps a missing BOLT makes pgo+bolt unavailable, with the packages to install.
		for _, p := range BOLTPackages {
			if !DebInstalled(p) {
				missing = append(missing, p)
			}
		}
	}
	if len(missing) > 0 {
		if !o.InstallDeps {
			return res, exitcode.MissingErrorf("missing Debian packages to build PHP: %s (install them: apt-get install --no-install-recommends %s, or pass --install-deps)",
				strings.Join(missing, " "), strings.Join(missing, " "))
		}
		if err := InstallPackages(ctx, missing, log); err != nil {
			return res, err
		}
	}
	res.Extensions = plan

	// The source.
	var src Source
	if o.SourcePath != "" {
		src, err = LocalSource(o.SourcePath)
	} else {
		if o.OnStep != nil {
			o.OnStep("source", "apt-get source "+o.Debian)
		}
		src, err = FetchDebian(ctx, o.CacheDir, o.Debian, o.DebianVersion, log)
	}
	if err != nil {
		return res, err
	}
	res.Source = src
	includeDebian := o.Debian8
	if v, err := exec.CommandContext(ctx, o.PHP, "-r", "echo PHP_VERSION;").Output(); err == nil {
		res.InstalledPHP = strings.TrimSpace(string(v))
		if src.Version != "" && versionLess(src.Version, res.InstalledPHP) {
			res.Notes = append(res.Notes, fmt.Sprintf("the source (PHP %s) is older than the installed PHP %s: it lacks the security fixes between them; Debian's own binary is in the comparison",
				src.Version, res.InstalledPHP))
			includeDebian = true
		}
	}

	compiler, err := CompilerVersion(ctx)
	if err != nil {
		return res, exitcode.MissingErrorf("no C compiler (Debian package build-essential): %v", err)
	}
	res.Environment.Compiler = compiler
	full := ConfigureArgs("", plan, o.ConfigureArgs)
	res.Configure = full[1:]
	b := &Builder{CacheDir: o.CacheDir, Source: src, Configure: full[1:], Compiler: compiler, Jobs: o.Jobs, Make: o.Make, OnStep: o.OnStep}

	holdApp := App{}
	if o.HoldoutApp != nil {
		if err := stack.CopyFS(o.HoldoutApp, filepath.Join(appDir, "holdout")); err != nil {
			return res, err
		}
		if err := stack.DateBack(filepath.Join(appDir, "holdout")); err != nil {
			return res, err
		}
		holdApp = App{Docroot: filepath.Join(appDir, "holdout"), Front: "index.php"}
	}
	appHash, err := HashFS(o.App)
	if err != nil {
		return res, err
	}
	cgiTrainer := &CGITrainer{App: app, AppHash: appHash, URLs: o.Train, Repeats: max(o.TrainN, 1), JIT: o.JIT}
	var trainer Trainer = cgiTrainer
	switch o.TrainMode {
	case "", "cgi":
	case "live":
		trainer = &LiveTrainer{CGI: cgiTrainer, App: o.appStack(), Duration: o.TrainDuration}
	default:
		return res, exitcode.UsageErrorf("--train-mode %q: want cgi or live", o.TrainMode)
	}

	built := map[string]Binaries{}
	for _, name := range o.Variants {
		vr := &VariantResult{Name: name}
		res.Variants = append(res.Variants, vr)
		_, cached := b.Cached(name, o.ProfFlags, trainer)
		m, err := b.Build(ctx, name, o.ProfFlags, trainer)
		vr.Cached = cached
		vr.Key, vr.Steps, vr.Warnings, vr.LogDir = m.Key, m.Steps, m.Warnings, m.LogDir
		if err != nil {
			if ctx.Err() != nil {
				vr.Reason = "interrupted while building"
				res.Partial = true
				return res, ctx.Err()
			}
			vr.Reason = err.Error()
			fmt.Fprintf(log, "%s: %v\n", name, err)
			continue
		}
		vr.Prefix, vr.BuildSeconds = m.Prefix, m.Seconds
		bins, err := PrefixBinaries(m.Prefix)
		if err == nil {
			err = EnsureINI(bins)
		}
		if err != nil {
			vr.Reason = err.Error()
			continue
		}
		if o.OnStep != nil {
			o.OnStep(name, "smoke test (demo app through nginx + php-fpm)")
		}
		if err := Smoke(ctx, bins, o.SmokeApp, DemoChecks, log); err != nil {
			if ctx.Err() != nil {
				res.Partial = true
				return res, ctx.Err()
			}
			vr.Reason = "smoke test failed: " + err.Error()
			continue
		}
		if err := MarkSmokeOK(m.Prefix); err != nil {
			vr.Reason = err.Error()
			continue
		}
		vr.Available = true
		vr.PHPFPM = bins.FPM
		built[name] = bins
	}
	if includeDebian {
		vr := &VariantResult{Name: Debian, Prefix: "/usr"}
		res.Variants = append(res.Variants, vr)
		cgi, err := exec.LookPath("php-cgi")
		if err != nil {
			vr.Reason = "Debian's php-cgi is not installed (Debian package php8.2-cgi)"
		} else if err := Smoke(ctx, Binaries{FPM: ""}, o.SmokeApp, DemoChecks, log); err != nil {
			vr.Reason = "smoke test failed: " + err.Error()
		} else {
			vr.Available = true
			built[Debian] = Binaries{Prefix: "/usr", CGI: cgi}
		}
	}
	if !o.Verify {
		return res, nil
	}
	base, ok := built[Baseline]
	if !ok {
		res.Notes = append(res.Notes, "no verification: the baseline is not available")
		return res, nil
	}
	res.Guard = base.Guard
	arms := []Arm{{Name: Baseline, CGI: base.CGI, Opcache: base.Opcache, Guard: base.Guard}}
	for _, v := range res.Variants {
		if bin, ok := built[v.Name]; ok && v.Name != Baseline {
			arms = append(arms, Arm{Name: v.Name, CGI: bin.CGI, Opcache: bin.Opcache, OwnINI: v.Name == Debian, Guard: base.Guard})
		}
	}
	if len(arms) < 2 {
		res.Notes = append(res.Notes, "no verification: no variant besides the baseline is available")
		return res, nil
	}
	if bin, ok := built[PGO]; ok && o.HugeCodePages {
		arms = append(arms, hugeArm(ctx, res, bin, base.Guard)...)
	}
	// One error budget for the build: the verification's comparisons (each variant on each set) and the
	// throughput check's (each variant's requests/s) share it.
	tpPairs := 0
	if o.ThroughputTrial > 0 {
		tpPairs = len(arms) - 1
	}
	budget := experiment.NewBudget(stats.DefaultAlpha, (len(arms)-1)*len(SetNames)+tpPairs)
	res.Alpha = budget.Total()
	cfg := VerifyConfig{App: app, HoldoutApp: holdApp, Train: o.Train, Holdout: o.Holdout, Guard: base.Guard,
		Rounds: o.Rounds, Repeats: o.Repeats, JIT: o.JIT, Callgrind: o.Callgrind,
		Alpha: budget.Draw((len(arms) - 1) * len(SetNames)), RunAlpha: budget.Total()}
	res.CPU = cfg.cpu()
	cfg.OnRound = func(r, n int) {
		if o.OnStep != nil {
			o.OnStep("verify", fmt.Sprintf("round %d/%d (php-cgi -T pinned to CPU %d)", r, n, res.CPU))
		}
	}
	arRes, done, verr := Verify(ctx, arms, cfg, log)
	res.Rounds = done
	if done > 0 {
		fill(res, arRes)
	}
	if verr != nil {
		if ctx.Err() != nil {
			res.Partial = true
			return res, ctx.Err()
		}
		return res, fmt.Errorf("verification: %w", verr)
	}
	if o.ThroughputTrial > 0 {
		var fa []FPMArm
		for _, a := range arms {
			fpm, of := "", a.Name
			if v := res.Variant(a.Name); v != nil && v.Of != "" {
				of = v.Of
			}
			if a.Name != Debian {
				fpm = built[of].FPM
			}
			fa = append(fa, FPMArm{Name: a.Name, FPM: fpm, INI: a.INI})
		}
		if o.OnStep != nil {
			o.OnStep("verify", fmt.Sprintf("throughput through php-fpm, %d interleaved rounds", cfg.Rounds))
		}
		tp, err := Throughput(ctx, fa, o.appStack(), o.Train, max(o.Rounds, 6), o.ThroughputTrial, budget.Draw(tpPairs))
		for name, r := range tp {
			if v := res.Variant(name); v != nil {
				v.Throughput = &r
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				res.Partial = true
				return res, ctx.Err()
			}
			res.Notes = append(res.Notes, "throughput through php-fpm not measured: "+err.Error())
		}
	}
	return res, nil
}

// hugeArm probes whether opcache.huge_code_pages puts the pgo build's text on huge pages; if so it adds the arm
// that runs pgo with it (and its result row), else a note that says why not.
func hugeArm(ctx context.Context, res *Result, bin Binaries, guard string) []Arm {
	h, err := ProbeHugeCodePages(ctx, bin.CGI, bin.Opcache)
	if err != nil {
		res.Notes = append(res.Notes, "opcache.huge_code_pages on pgo not measured: "+err.Error())
		return nil
	}
	ok, why := HugeCredited(h)
	if !ok {
		res.Notes = append(res.Notes, "opcache.huge_code_pages on pgo not measured: "+why)
		return nil
	}
	name := PGO + HugeSuffix
	pv := res.Variant(PGO)
	res.Variants = append(res.Variants, &VariantResult{Name: name, Prefix: pv.Prefix, Available: true, Key: pv.Key,
		PHPFPM: pv.PHPFPM, Of: PGO, Setting: HugeCodePagesINI})
	res.Notes = append(res.Notes, fmt.Sprintf("%s: pgo with %s (checked: %s)", name, HugeCodePagesINI, why))
	return []Arm{{Name: name, CGI: bin.CGI, Opcache: bin.Opcache, INI: []string{HugeCodePagesINI}, Guard: guard}}
}

func fill(res *Result, ar []*ArmResult) {
	base := ar[0]
	for _, a := range ar {
		v := res.Variant(a.Name)
		if v == nil {
			continue
		}
		v.TimePerReqUS, v.IPR = map[string]float64{}, map[string]float64{}
		for set, s := range a.Sets {
			v.TimePerReqUS[set] = s.Median
			if s.IPR > 0 {
				v.IPR[set] = s.IPR
				if b := base.Sets[set].IPR; b > 0 && a != base {
					if v.IPRChangePct == nil {
						v.IPRChangePct = map[string]float64{}
					}
					v.IPRChangePct[set] = (s.IPR/b - 1) * 100
				}
			}
		}
		if a == base {
			continue
		}
		v.GainPct, v.GainCIPct, v.Verdict = map[string]float64{}, map[string][2]float64{}, map[string]string{}
		for set, c := range a.Cmp {
			// Time per request: a negative change is a gain.
			v.GainPct[set] = -c.Estimate * 100
			v.GainCIPct[set] = [2]float64{-c.Hi * 100, -c.Lo * 100}
			v.Verdict[set] = string(c.Verdict)
		}
	}
}

// versionLess compares dotted versions numerically (8.2.32 < 8.2.36).
func versionLess(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(pa) && i < len(pb); i++ {
		var x, y int
		fmt.Sscan(pa[i], &x)
		fmt.Sscan(pb[i], &y)
		if x != y {
			return x < y
		}
	}
	return len(pa) < len(pb)
}

// appStack is how the app is served through php-fpm (live training, throughput): in place when on disk.
func (o *Options) appStack() stack.Config {
	if o.AppDir == "" {
		return stack.Config{AppFS: o.App}
	}
	return stack.Config{App: o.AppDir, Front: o.AppFront, Writable: o.AppWritable, LinkFiles: true}
}
