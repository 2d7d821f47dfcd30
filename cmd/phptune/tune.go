package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/phptune/phptune/internal/apply"
	"github.com/phptune/phptune/internal/bytesize"
	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/measure"
	"github.com/phptune/phptune/internal/phpini"
	"github.com/phptune/phptune/internal/profile"
	"github.com/phptune/phptune/internal/report"
	"github.com/phptune/phptune/internal/stack"
	"github.com/phptune/phptune/internal/stats"
	"github.com/phptune/phptune/internal/tune"
)

type tuneFlags struct {
	front, nginx, user, fromPool, prefix, fromINI, fromApache, fromSite, out, method, bodyFile, memory, expectBody, cgroup string
	headers, inis, knobs, skip, only, phpFPM, build                                                                        []string
	mix                                                                                                                    mixFlags
	budget, p99, timeout                                                                                                   time.Duration
	rate, minEffect, alpha                                                                                                 float64
	json, noScreen, screen, profile, builds, ratePeak, noDuet, verbose                                                     bool

	soak string // --soak: a duration, off, or "" (a tenth of the budget)
}

func newTuneCmd() *cobra.Command {
	var f tuneFlags
	cmd := &cobra.Command{
		Use:   "tune [APP|PRESET]",
		Short: "Size the php-fpm pool and decide the knobs that matter, with evidence",
		Example: `  phptune tune                                               # the bundled demo app
  phptune tune ./myapp --url / --url /blog/=3 --budget 10m --memory 4GiB
  phptune tune wordpress                                     # a prepared preset (phptune workload list)
  phptune tune ./myapp --from-access-log /var/log/nginx/access.log --log-exclude '^/admin/'
  phptune tune ./myapp --url-file urls.yaml                  # logged-in pages, forms, APIs
  phptune tune ./myapp --from-pool /etc/php/8.2/fpm/pool.d/www.conf --soak 1h   # max_requests from an hour's growth
  phptune tune ./myapp --p99 200ms --rate 300                # and check a latency goal at that rate
  phptune tune ./myapp --from-access-log access.log --p99 200ms --rate peak   # at the log's busiest second
  phptune tune ./myapp --url / --url /blog/ --build pgo      # a PHP trained on this mix competes`,
		Long: `Serves APP (a docroot with a front controller that the workers' user can read, a prepared workload preset,
or the bundled demo app when omitted) with nginx + php-fpm in private stacks, finds the load where throughput
levels off, sizes the pool from it and --memory, then races each knob's values in interleaved rounds until it is
decided (better, worse, no_difference) or its share of --budget runs out (inconclusive); server races Apache's
runtimes when installed; it, pm, keepalive and backlog refuse a value whose p99 is shown worse. Last, the
recommendation is compared with Debian's defaults and "2 x cores".

KNOBS, IN THE ORDER TRIED
` + tuneKnobOrder() + ` A knob that cannot matter here is not tried, with the reason.

FILES WRITTEN
php-fpm-pool.conf (php-fpm-NAME.conf: other files of the pool), php.ini and nginx-upstream.conf: the starting
files changed where php-fpm and nginx read them, checked by php-fpm -t and nginx -t (Apache's site and MPM files
where Apache wins); changes.diff, apply.txt (where each goes), report.html, result.json in --out.`,
		Args: args(0, 1, "APP, a docroot or a preset's name"),
		RunE: run(func(cmd *cobra.Command, args []string) error { return runTune(cmd.Context(), f, args) }),
	}
	learnMore(cmd, `docs/tune.md (each knob's values, what is measured, the budget, applying); docs/runtimes.md (nginx or Apache);
docs/engine.md (how a race is decided and its error rates); docs/urls.md (URL files)`)
	fl := cmd.Flags()
	fl.StringVar(&f.front, "front", "", "front controller `PATH`, relative to the docroot (default index.php, or the preset's)")
	f.mix.register(fl, "a URL path to load, `PATH[=WEIGHT]` (repeatable; default / or a preset's mix)")
	fl.StringVar(&f.expectBody, "expect-body", "", "a `REGEX` every response must match (a preset's URLs have their own)")
	fl.StringVarP(&f.method, "method", "m", "GET", "request `METHOD`")
	fl.StringArrayVarP(&f.headers, "header", "H", nil, "request header `\"NAME: VALUE\"` (repeatable)")
	fl.StringVar(&f.bodyFile, "body", "", "request body from this `FILE`")
	flagGroup(fl, "WHAT TO LOAD", "url", "url-file", "from-access-log", "log-format", "log-top", "log-exclude", "log-keep",
		"method", "header", "body", "expect-body", "front")

	fl.StringVar(&f.fromPool, "from-pool", "", "start from this php-fpm pool `FILE` (or php-fpm.conf, its includes read) instead of Debian's defaults")
	fl.StringVar(&f.prefix, "prefix", "", "php-fpm's prefix `DIR` (its -p), for --from-pool's relative include= lines (default /usr; "+
		"the official image's is /usr/local)")
	fl.StringVar(&f.fromINI, "from-ini", "", "start from the settings of this php.ini-style `FILE`")
	fl.StringVar(&f.fromSite, "from-site", "", "the nginx site `FILE` that serves the app, changed to pass to the pool (default: "+
		"the one nginx -T shows with the app's docroot as root, else "+apply.DebianSite+" when enabled)")
	fl.StringVar(&f.fromApache, "from-apache", "", "start from this Apache `FILE` (apache2.conf, its includes read): prefork + mod_php "+
		"with its MPM limits and php_value lines, or event + php-fpm")
	fl.StringArrayVar(&f.inis, "ini", nil, "pin an ini setting `KEY=VALUE` (repeatable; never changed)")
	fl.StringArrayVar(&f.phpFPM, "php-fpm", nil, "php-fpm `BINARY` (default: the newest php-fpm8.x); twice or more: they race as the knob php")
	fl.BoolVar(&f.builds, "builds", false, "race the installed php-fpm and the builds in phptune build's cache as the knob php")
	fl.StringVar(&f.nginx, "nginx", "", "nginx `BINARY` (default: /usr/sbin/nginx)")
	fl.StringVar(&f.user, "user", "", "`USER` for the workers when run as root (default www-data)")
	flagGroup(fl, "WHERE TO START", "from-pool", "from-ini", "from-site", "from-apache", "ini", "php-fpm", "builds", "nginx", "user")

	fl.StringArrayVar(&f.knobs, "knob", nil, "race `NAME=V1,V2` from V1, or pin NAME=V with one value: a knob above or an ini "+
		"directive (repeatable; opcache_memory takes MEM/STRINGS/FILES, as in 512/32/40000)")
	fl.StringSliceVar(&f.skip, "skip", nil, "`KNOBS` not to decide, e.g. listen,keepalive")
	fl.StringSliceVar(&f.only, "only", nil, "decide only these `KNOBS` (and any --knob), e.g. opcache,jit; none: the pool size alone")
	fl.StringSliceVar(&f.build, "build", nil, "first build PHP trained on this mix (outside the budget) and race it as the knob php: "+
		"`VARIANTS` of pgo, pgo+lto, pgo+bolt")
	fl.StringVar(&f.memory, "memory", "", "memory the pool may use, a `SIZE` such as 4GiB (default: the cgroup's limit or "+
		"MemAvailable, less what is in use and a reserve)")
	fl.StringVar(&f.cgroup, "cgroup", "", "size for this `CGROUP`'s memory and CPU limits (a path as /proc/PID/cgroup shows it, "+
		"or its directory under /sys/fs/cgroup; default: the one phptune runs in)")
	fl.StringVar(&f.soak, "soak", "", "serve the mix for `DURATION` on top of --budget, reading each worker's memory growth per "+
		"request for max_requests (default: a tenth of the budget, within it, when max_requests is decided), or off")
	fl.DurationVar(&f.p99, "p99", 0, "latency goal judged open-loop at --rate: exit 3 unless the p99 is shown below it")
	fl.Var(rateValue{&f.rate, &f.ratePeak}, "rate", "open model: `RATE` requests/s at which --p99 is judged, or peak: the access log's busiest second")
	fl.BoolVar(&f.screen, "screen", false, "count CPU-only candidates' work per request first, even with a budget under 5 minutes")
	fl.BoolVar(&f.noScreen, "no-screen", false, "give CPU-only knobs timed trials without counting their work first")
	fl.BoolVar(&f.noDuet, "no-duet", false, "run the CPU races' trials in turn, not at the same time (duet rounds, where the machine's "+
		"noise cancels)")
	flagGroup(fl, "WHAT TO DECIDE", "knob", "skip", "only", "build", "memory", "cgroup", "soak", "p99", "rate", "screen", "no-screen")

	fl.DurationVar(&f.budget, "budget", 10*time.Minute, "bound on the whole run")
	fl.Float64Var(&f.minEffect, "min-effect", defaultMinEffectPct, minEffectUsage)
	fl.Float64Var(&f.alpha, "alpha", stats.DefaultAlpha, alphaUsage)
	fl.DurationVar(&f.timeout, "timeout", load.DefaultTimeout, timeoutUsage)
	flagGroup(fl, "HOW LONG AND HOW SURE", "budget", "min-effect", "alpha", "timeout")

	fl.StringVar(&f.out, "out", "", "run `DIR` for the files (default ./phptune-results/tune-TIMESTAMP)")
	fl.BoolVar(&f.json, "json", false, "print result.json to stdout instead of the summary")
	fl.BoolVarP(&f.verbose, "verbose", "v", false, "print the whole account (the sweep, the pool size, memory, every knob's row), "+
		"not the answer alone")
	fl.BoolVar(&f.profile, "profile", false, "then profile the starting point and the recommendation per request (into report.html)")
	flagGroup(fl, "OUTPUT", "out", "json", "verbose", "profile")
	return cmd
}

func runTune(ctx context.Context, f tuneFlags, args []string) error {
	app, err := resolveApp(args)
	if err != nil {
		return err
	}
	// What reading the input says (an access log's summary) is held until the input is known to be good.
	var notes bytes.Buffer
	o, err := f.options(ctx, app, &notes)
	if err != nil {
		return err
	}
	// Every usage error before the run dir is made, and before any note.
	if err := o.Check(); err != nil {
		return err
	}
	if app.workload == nil { // a docroot of the user's, which a server must be able to serve (a preset's is our copy)
		if err := o.Stack.CheckServable(); err != nil {
			return err
		}
	}
	os.Stderr.Write(notes.Bytes())
	f.screening(&o, func() []load.MixItem { return o.URLs })
	out, release, err := openRunDir(f.out, "tune")
	if err != nil {
		return err
	}
	defer release()
	defer setProcs(0)()
	// The app's own services (a preset's database) for the whole run, stopped on every path.
	svc, err := app.startServices(ctx)
	defer svc.Stop(context.Background())
	if err != nil {
		return err
	}

	line := newStatusLine(os.Stderr)
	var builds []tune.Build
	if len(f.build) > 0 {
		if builds, err = buildForTune(ctx, args, o, f.build, out, line); err != nil {
			return err
		}
		if err := raceBuilds(&o, builds); err != nil {
			return err
		}
	}
	o.Progress = func(s tune.Status) {
		if s.Phase == "start" && !line.on {
			return // a start that fails says so in its one-line error; a line before it would be noise
		}
		line.step(s.Phase, "tune: %s/%s  %s: %s  best: %s", s.Elapsed.Round(time.Second), s.Budget, s.Phase, s.Detail, s.Best)
	}
	runCtx, serviceDied, stopWatch := watchServices(ctx, svc)
	defer stopWatch()
	if login := o.LogIn; login != nil {
		// The session is kept for --profile, which speaks FastCGI and cannot log in itself.
		o.LogIn = func(ctx context.Context, base string) ([]load.MixItem, error) {
			urls, err := login(ctx, base)
			if err == nil {
				o.URLs = urls
			}
			return urls, err
		}
	}
	res, runErr := tune.Run(runCtx, o)
	line.clear()
	if err := serviceDied(); err != nil {
		runErr = err
		if res != nil {
			res.Partial = true
		}
	}
	if res == nil || (runErr != nil && len(res.Trials) == 0 && len(res.Screens) == 0) {
		return runErr // nothing measured: nothing to keep
	}
	res.CommandLine, res.Builds = os.Args, builds
	if runErr == nil {
		if err := writeTuneFiles(ctx, out, res, o.Stack, startPaths{f.fromPool, f.prefix, f.fromINI, f.fromSite, o.Stack.App}); err != nil {
			return err
		}
	}
	if runErr == nil && f.profile {
		runErr = profileAfter(ctx, o, res, line)
	}
	for _, where := range report.Finite(res) {
		res.Warnings = append(res.Warnings, "internal: a figure was not a number and is saved as 0: "+where)
	}
	holds := "report.html, result.json"
	if runErr == nil {
		holds += ", " + fileNames(res.Files)
	}
	text := report.TuneSummary
	if f.verbose {
		text = report.Tune
	}
	end := ending{dir: out, json: f.json, holds: holds, text: func(w io.Writer) { text(w, res) },
		pages: func(dir string) error { return writeTuneReport(dir, res) }}
	// result.json holds the answer the summary and report.html print, beside the measurements it is drawn from.
	if err := end.finish(report.RecordOf(res)); err != nil {
		return err
	}
	if runErr != nil {
		return runErr
	}
	if res.P99Check != nil && !res.P99Check.Met {
		c := res.P99Check
		return exitcode.ThresholdErrorf("the p99 goal %s at %.0f req/s was not shown to be met: p99 %.1f ms [%.1f, %.1f] (%s)",
			f.p99, c.Rate, c.P99Us/1000, c.P99LoUs/1000, c.P99HiUs/1000, c.Verdict)
	}
	return nil
}

// profileAfter profiles the starting point beside the recommendation, per request (tune --profile): why the
// recommendation is faster, after the budget and kept out of the verdicts. It returns ctx's error when
// interrupted (what there is is kept); other failures are a warning.
func profileAfter(ctx context.Context, o tune.Options, res *tune.Result, line *statusLine) error {
	po := profile.Options{Stack: o.Stack, AppName: o.AppName, URLs: o.URLs, Request: o.Request,
		Variants: []profile.Variant{{Name: "starting point", Config: res.Baseline}, {Name: "recommendation", Config: res.Recommendation}}}
	po.Progress = func(variant, step string) { line.set("tune --profile: %s: %s", variant, step) }
	pr, err := profile.Run(ctx, po)
	line.clear()
	if pr != nil {
		res.Profile = pr
	}
	if err != nil && ctx.Err() != nil {
		return err
	}
	if err != nil {
		res.Warnings = append(res.Warnings, "tune --profile: "+err.Error())
	}
	return nil
}

// screening gives o its screener (unless --no-screen), counting with urls() as they are when it counts: after a
// URL file's login, with its session. A missing program is noted only where screening would run (--screen, or a
// budget of tune.ScreenBudget or more); the caller has checked the input first.
func (f tuneFlags) screening(o *tune.Options, urls func() []load.MixItem) {
	if f.noScreen {
		return
	}
	var missing string
	if o.Screen, missing = screener(o.Stack, urls, o.Request); o.Screen == nil && (f.screen || o.Budget >= tune.ScreenBudget) {
		fmt.Fprintf(os.Stderr, "phptune tune: %s is missing, so CPU-only knobs get timed trials without screening (apt-get install %s)\n",
			missing, missing)
	}
}

// options turns the flags and the app into tune's options: the stack, the load (what reading it says goes to
// notes), the starting point, the knobs (with the PHP binaries to race) and the memory to plan the pool in; and
// checks that php-fpm and nginx are there before anything starts.
func (f tuneFlags) options(ctx context.Context, app *appSpec, notes io.Writer) (o tune.Options, err error) {
	sc, name := app.cfg, app.name
	sc.Nginx, sc.User = f.nginx, f.user
	if f.front != "" {
		sc.Front = f.front
	}
	var binaries []string
	if f.builds {
		if f.phpFPM, err = withBuilds(f.phpFPM); err != nil {
			return o, err
		}
	}
	for _, b := range f.phpFPM {
		bin, err := stack.FindPHPFPM(b)
		if err != nil {
			return o, err
		}
		binaries = append(binaries, bin)
	}
	if len(binaries) > 0 {
		sc.PHPFPM = binaries[0]
	}
	o = tune.Options{Stack: sc, AppName: name, Budget: f.budget, P99: f.p99, Rate: f.rate, MinEffect: f.minEffect / 100,
		Alpha: f.alpha, Timeout: f.timeout, Pins: map[string]string{}, Asked: map[string]bool{}}
	for _, v := range f.build {
		if !slices.Contains(buildVariants, v) {
			return o, exitcode.UsageErrorf("--build %s: want pgo, pgo+lto, pgo+bolt or baseline", v)
		}
	}
	if len(f.build) > 0 && slices.Contains(f.skip, "php") {
		return o, exitcode.UsageErrorf("--build and --skip php: the builds race as the knob php")
	}
	if err := f.load(&o, app, notes); err != nil {
		return o, err
	}
	if err := f.logLoad(&o); err != nil {
		return o, err
	}
	// The starting point and the knobs.
	known := withServer(knob.All(preloadScript(sc), binaries), sc.PHPFPM)
	if err := checkNames(ctx, sc.PHPFPM, known, map[string][]string{"--knob": f.knobs}, f.inis); err != nil {
		return o, err
	}
	if _, err := siteFile(f.fromSite, ""); err != nil { // read again at the end: checked before the run
		return o, err
	}
	if f.prefix != "" && f.fromPool == "" {
		return o, exitcode.UsageErrorf("--prefix %s is where --from-pool's relative includes are read from: give --from-pool FILE too", f.prefix)
	}
	if o.Base, err = baseConfig(f.fromPool, f.prefix, f.fromINI, f.fromApache, f.inis, o.Pins); err != nil {
		return o, err
	}
	if len(binaries) > 1 {
		o.Base.PHPFPM = binaries[0]
	}
	if o.Knobs, err = f.knobSet(&o, known); err != nil {
		return o, err
	}
	o.BaseName = startName(f.fromPool != "" || f.fromINI != "" || f.fromApache != "", o.Base)
	o.Knobs = knob.UnderServer(o.Knobs)
	if o.Soak, err = parseSoak(f.soak); err != nil {
		return o, err
	}
	o.ForceScreen = f.screen
	o.Duet = !f.noDuet
	if f.screen && f.noScreen {
		return o, exitcode.UsageErrorf("--screen and --no-screen: give one of them")
	}
	if err := f.limits(&o); err != nil {
		return o, err
	}
	// Prerequisites before anything starts.
	if _, err := stack.FindPHPFPM(sc.PHPFPM); err != nil {
		return o, err
	}
	if _, err := stack.FindNginx(sc.Nginx); err != nil {
		return o, err
	}
	return o, needsApache(o, namedServers(f.knobs))
}

// limits reads the place the pool is sized for (--cgroup, or the cgroup phptune runs in) and sets the memory the
// pool may use (--memory wins) and nginx's workers from its CPUs.
func (f tuneFlags) limits(o *tune.Options) error {
	lim, err := measure.ReadLimits(f.cgroup)
	if err != nil {
		if f.cgroup != "" {
			return exitcode.UsageErrorf("--cgroup: %v", err)
		}
		// No cgroup to read (not Linux's /proc): the host's memory alone.
		lim = measure.Limits{HostCPUs: runtime.NumCPU()}
		lim.HostMemAvailable, _ = measure.MemAvailable()
	}
	o.Limits = &lim
	if o.Stack.NginxWorkers == 0 {
		o.Stack.NginxWorkers = lim.WholeCPUs()
	}
	if f.memory != "" {
		if o.Memory, err = parseMemory(f.memory); err != nil {
			return err
		}
		o.MemoryFrom = "--memory " + f.memory
		return nil
	}
	o.Memory, o.MemoryFrom = lim.Memory()
	// The pools already running in the same memory keep what they may still grow to.
	if pools, err := measure.RunningPools(""); err == nil {
		o.OtherPools = tune.OtherPools(pools, lim, lim.CgroupBound(), func(pid int) string {
			l, _ := measure.ReadLimitsOf(pid)
			return l.Cgroup
		})
		if kept, names := tune.Reserve(o.OtherPools); names != "" {
			o.Memory -= kept
			o.MemoryFrom += "; less " + names
		}
	}
	if o.Memory <= 0 {
		return exitcode.UsageErrorf("no memory is left for a pool: %s; free some or give --memory", o.MemoryFrom)
	}
	return nil
}

// load fills o's request and URL mix: the flags' (URLs, a URL file, access logs), else the preset's (with its
// login), else /.
func (f tuneFlags) load(o *tune.Options, app *appSpec, notes io.Writer) error {
	var check *regexp.Regexp
	var err error
	if f.expectBody != "" {
		if check, err = regexp.Compile(f.expectBody); err != nil {
			return exitcode.UsageErrorf("--expect-body: %v", err)
		}
	}
	if o.Request, err = parseRequest(f.method, f.headers, f.bodyFile, true); err != nil {
		return err
	}
	if o.URLs, o.LogIn, err = f.mix.build(o.Request, check, notes); err != nil {
		return err
	}
	if len(o.URLs) == 0 {
		if app.withLogin != nil {
			// A preset's mix with its logged-in pages: the login is sent on the first stack.
			fm, err := app.withLogin.Mix(o.Request, nil)
			if err != nil {
				return err
			}
			o.URLs, o.LogIn = fm.Items, sessionOf(fm)
		} else if app.urls != nil {
			o.URLs = app.urls // a preset's mix, each URL with its content marker
		} else {
			o.URLs = []load.MixItem{{URI: "/", Weight: 1, ExpectBody: check}}
		}
	}
	return nil
}

// startName is what the headline calls the starting point base: your configuration when read from files, else
// Debian's defaults, or your starting point where --knob or --ini changed them (the PHP binary aside).
func startName(fromFiles bool, base knob.Config) string {
	debian := knob.Debian()
	debian.PHPFPM = base.PHPFPM
	switch {
	case fromFiles:
		return "your configuration"
	case base.Key() != debian.Key():
		return "your starting point"
	}
	return "Debian's defaults"
}

// knobSet is tune's knobs after --knob (values to race, or one to pin: into o.Base and o.Pins), --skip and
// --only.
func (f tuneFlags) knobSet(o *tune.Options, knobs []knob.Knob) ([]knob.Knob, error) {
	for _, kv := range f.knobs {
		name, vals, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, exitcode.UsageErrorf("--knob %q: want NAME=V1,V2,...", kv)
		}
		values := strings.Split(vals, ",")
		k, err := knob.FixedIn(knobs, name, values)
		if err != nil {
			return nil, err
		}
		// One value pins the knob (the pool size too: then it is not sized).
		if len(values) > 1 {
			o.Asked[k.Name] = true
		}
		if len(values) == 1 {
			if err := k.Set(&o.Base, values[0]); err != nil {
				return nil, exitcode.UsageErrorf("--knob %s: %v", kv, err)
			}
			o.Pins[k.Name] = values[0]
			continue
		}
		if name == "max_children" {
			return nil, exitcode.UsageErrorf("--knob max_children: the pool size is measured and its neighbours compared; give one value to pin it")
		}
		// The first value is where the sweep starts (unless a pin says otherwise): "--knob NAME=V1,V2" tries V2 against V1.
		if _, pinned := o.Pins[k.Name]; !pinned {
			if err := k.Set(&o.Base, k.Candidates(o.Base)[0]); err != nil {
				return nil, exitcode.UsageErrorf("--knob %s: %v", kv, err)
			}
		}
		replaced := false
		for i := range knobs {
			if knobs[i].Name == k.Name {
				knobs[i], replaced = k, true
			}
		}
		if !replaced {
			knobs = append(knobs, k)
		}
	}
	for _, name := range f.only {
		if name == "none" {
			name = knob.MaxChildren().Name // --only none: the pool size alone
		}
		o.Asked[name] = true
	}
	return f.narrow(knobs)
}

// narrow applies --skip and --only to knobs (a knob given with --knob stays under --only).
func (f tuneFlags) narrow(knobs []knob.Knob) ([]knob.Knob, error) {
	for _, name := range f.skip {
		found := false
		for i := range knobs {
			if knobs[i].Name == name {
				knobs = append(knobs[:i], knobs[i+1:]...)
				found = true
				break
			}
		}
		if !found {
			return nil, exitcode.UsageErrorf("--skip %s: no such knob among %s", name, knobNames(knobs))
		}
	}
	if len(f.only) > 0 {
		keep := map[string]bool{}
		for _, kv := range f.knobs {
			name, _, _ := strings.Cut(kv, "=")
			keep[strings.TrimPrefix(name, "ini:")] = true
		}
		for _, name := range f.only {
			if name == "none" {
				continue
			}
			if _, ok := knob.ByName(name); !ok {
				return nil, exitcode.UsageErrorf("--only %s: no such knob among %s", name, knobNames(knobs))
			}
			keep[name] = true
		}
		var kept []knob.Knob
		for _, k := range knobs {
			if keep[k.Name] {
				kept = append(kept, k)
			}
		}
		knobs = kept
	}
	return knobs, nil
}

// screener counts a configuration's work per request: instructions with php-cgi under callgrind (no server
// needed) and system calls with strace on a php-fpm pool of its own. Nil, with the missing program's name, when
// valgrind or strace is not installed.
// screener counts with urls() as they are when it counts: after a URL file's login, with its session.
func screener(sc stack.Config, urls func() []load.MixItem, req load.Request) (*tune.Screener, string) {
	if _, err := measure.FindValgrind(""); err != nil {
		return nil, "valgrind"
	}
	if _, err := measure.FindStrace(); err != nil {
		return nil, "strace"
	}
	// Instructions are counted on php-cgi of php-fpm's version.
	if fpm, err := stack.FindPHPFPM(sc.PHPFPM); err == nil {
		if _, err := measure.FindPHPCGI("", fpm); err != nil {
			if v := phpini.Version(fpm); v != "" {
				return nil, "php" + v + "-cgi"
			}
			return nil, "php-cgi"
		}
	}
	return &tune.Screener{
		Method: "instructions: callgrind on php-cgi; syscalls: strace on php-fpm",
		Instructions: func(ctx context.Context, cfg knob.Config) (float64, error) {
			// One warm-up and two measured requests a URL: the counts repeat to a few parts in ten thousand.
			po := profile.Options{Stack: sc, URLs: urls(), Request: req, InstrWarmup: 1, InstrN: 2}
			instr, _, err := profile.ScreenInstructions(ctx, po, cfg)
			return instr, err
		},
		Syscalls: func(ctx context.Context, cfg knob.Config) (float64, error) {
			po := profile.Options{Stack: sc, URLs: urls(), Request: req, NoInstructions: true, Requests: 100, Warmup: 2,
				Variants: []profile.Variant{{Name: "screen", Config: cfg}}}
			pr, err := profile.Run(ctx, po)
			if err != nil {
				return 0, err
			}
			if len(pr.Variants) == 0 {
				return 0, fmt.Errorf("count system calls: no result")
			}
			if e := pr.Variants[0].Error; e != "" {
				return 0, fmt.Errorf("count system calls: %s", e)
			}
			return pr.Variants[0].SyscallsPerReq, nil
		},
	}, ""
}

// preloadScript is the app's own opcache preload script, relative to the docroot ("" = none).
func preloadScript(sc stack.Config) string {
	for _, p := range []string{"preload.php", "config/preload.php"} {
		if sc.AppFS != nil {
			if _, err := fs.Stat(sc.AppFS, p); err == nil {
				return p
			}
		} else if st, err := os.Stat(filepath.Join(sc.App, p)); err == nil && st.Mode().IsRegular() {
			return p
		}
	}
	return ""
}

// tuneKnobOrder is the help's list of the knobs in the order tune decides them, from the code that orders them.
func tuneKnobOrder() string {
	const ini = "ini directives given with --knob"
	ks := append(withServer(knob.All("preload.php", []string{"a", "b"}), ""), knob.INI(ini))
	order := tune.Order(ks)
	var cpu, rest []string
	for i, n := range order {
		if n == knob.MaxChildren().Name {
			cpu, rest = order[:i], order[i+1:]
			break
		}
	}
	return fmt.Sprintf("On CPU per request: %s; then the pool size, max_children; then on requests/s served: %s; max_requests from "+
		"workers' memory growth per request (--soak).", strings.Join(cpu, ", "), strings.Join(rest, ", "))
}

func knobNames(ks []knob.Knob) string {
	var names []string
	for _, k := range ks {
		names = append(names, k.Name)
	}
	return strings.Join(names, ", ")
}

// writeTuneFiles writes the recommendation as files for a Debian server, each the starting configuration's
// file (Debian's pool, or --from-pool's and --from-ini's) with the changes made in place and checked by the
// server that will read it, with their diffs (changes.diff) and how to apply them (apply.txt).
func writeTuneFiles(ctx context.Context, out string, res *tune.Result, sc stack.Config, from startPaths) error {
	fpm, err := stack.FindPHPFPM(sc.PHPFPM)
	if err != nil {
		return err
	}
	ngx, err := stack.FindNginx(sc.Nginx)
	if err != nil {
		return err
	}
	header := []string{
		fmt.Sprintf("phptune tune recommendation for %s, measured on %s (%d CPUs) on %s.", res.App, res.Environment.Host.CPUModel,
			res.Environment.Host.CPUs, res.Started.Format("2006-01-02")),
		"Valid for this host and this load; measure again before applying it elsewhere.",
	}
	ver, err := phpVersion(fpm, res.Environment.PHP)
	if err != nil {
		return err
	}
	t := apply.Target{Version: ver, Workers: res.Environment.Host.CPUs, Front: sc.Front}
	if l := res.Environment.Limits; l != nil {
		t.Workers = l.WholeCPUs()
	}
	if sc.App != "" {
		t.Docroot, _ = filepath.Abs(sc.App)
	}
	start, err := startFiles(t.Version, from)
	if err != nil {
		return err
	}
	plan, err := apply.Make(res.Recommendation, start, t, header)
	if err != nil {
		return err
	}
	files := map[string]string{}
	var names []string
	for _, f := range plan.Files {
		files[f.Name] = f.Text
		names = append(names, f.Name)
	}
	if _, ok := files[apply.PoolName]; ok {
		if err := stack.CheckFPMPool(ctx, fpm, plan.PoolCheck); err != nil {
			return fmt.Errorf("the pool as the changed files make it: %w", err)
		}
	}
	if err := checkNginxFiles(ctx, ngx, files, res.Recommendation); err != nil {
		return err
	}
	if err := checkApacheFiles(ctx, res.Recommendation, files, sc); err != nil {
		return err
	}
	var steps bytes.Buffer
	report.ApplyText(&steps, plan, out)
	files[apply.DiffName], files[applyName] = plan.Diffs(), steps.String()
	res.Files = map[string]string{}
	for _, name := range append(names, apply.DiffName, applyName) {
		if err := writeAtomic(filepath.Join(out, name), []byte(files[name])); err != nil {
			return err
		}
		res.Files[name] = filepath.Join(out, name)
	}
	res.Apply = plan
	return nil
}

// applyName is the run dir's file that says how to apply the recommendation.
const applyName = "apply.txt"

// checkNginxFiles runs nginx -t on the upstream with the user's site as changed, else with a location that
// has the lines the plan gives the site.
func checkNginxFiles(ctx context.Context, ngx string, files map[string]string, rec knob.Config) error {
	up, ok := files[apply.NginxName]
	if !ok {
		return nil
	}
	if site, ok := files[apply.NginxSiteName]; ok {
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

// startPaths are the --from-pool, --from-ini and --from-site files ("" when not given).
type startPaths struct{ pool, prefix, ini, site, docroot string }

// startFiles are the files the recommendation changes: --from-pool's (a pool file, or php-fpm.conf with its
// includes), else Debian's php-fpm.conf and pools for this PHP when the package put them there; --from-ini's;
// --from-site's, else the site nginx serves the docroot from, else Debian's default site when it is enabled.
func startFiles(version string, from startPaths) (apply.Start, error) {
	fromPool, fromINI := from.pool, from.ini
	s := apply.Start{Prefix: from.prefix}
	s.Pool.Path = fromPool
	if fromPool == "" {
		s.Pool.Path = apply.DebianMain(version)
	}
	b, err := os.ReadFile(s.Pool.Path)
	switch {
	case err == nil:
		s.Pool.Text = string(b)
	case fromPool != "":
		return s, exitcode.UsageErrorf("--from-pool: %v", err)
	default:
		s.Pool.Path = "" // no Debian pool here: the pool is written whole
	}
	if fromINI != "" {
		b, err := os.ReadFile(fromINI)
		if err != nil {
			return s, exitcode.UsageErrorf("--from-ini: %v", err)
		}
		s.INI = apply.File{Path: fromINI, Text: string(b)}
	}
	var err2 error
	if s.Site, err2 = siteFile(from.site, from.docroot); err2 != nil {
		return s, err2
	}
	for _, f := range []*apply.File{&s.Pool, &s.INI, &s.Site} {
		if f.Path != "" {
			f.Path, _ = filepath.Abs(f.Path)
		}
	}
	return s, nil
}

// phpVersion is PHP's major.minor, which names Debian's paths in the files (/etc/php/8.2/fpm): from Debian's
// binary name (php-fpm8.2), else from php-fpm -v's first line (a build's sbin/php-fpm names no version).
// Neither is an error rather than a guess: files for another version's paths would not be read.
func phpVersion(fpm, banner string) (string, error) {
	if v := phpini.Version(fpm); v != "" {
		return v, nil
	}
	if v := phpini.BannerVersion(banner); v != "" {
		return v, nil
	}
	return "", fmt.Errorf("the PHP version of %s is unknown (its name is not php-fpmX.Y and -v said %q), so the files "+
		"cannot name /etc/php/X.Y: give Debian's php-fpm with --php-fpm /usr/sbin/php-fpmX.Y", fpm, banner)
}

// parseMemory reads --memory: a size such as 4GiB, 512MiB or 512M.
func parseMemory(s string) (int64, error) {
	if v, err := bytesize.Parse(s); err == nil && v > 0 {
		return v, nil
	}
	return 0, exitcode.UsageErrorf("--memory %q: want a size such as 4GiB or 512MiB", s)
}

// parseSoak reads --soak: a duration, or off (-1); "" is 0, a tenth of the budget.
func parseSoak(s string) (time.Duration, error) {
	switch s {
	case "":
		return 0, nil
	case "off":
		return -1, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return d, nil
	}
	return 0, exitcode.UsageErrorf("--soak %q: want a duration such as 2m, or off", s)
}
