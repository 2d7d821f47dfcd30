package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/phptune/phptune/internal/bytesize"
	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/measure"
	"github.com/phptune/phptune/internal/profile"
	"github.com/phptune/phptune/internal/report"
	"github.com/phptune/phptune/internal/stack"
	"github.com/phptune/phptune/internal/stats"
	"github.com/phptune/phptune/internal/tune"
)

type tuneFlags struct {
	front, nginx, user, fromPool, fromINI, out, method, bodyFile, memory, check string
	headers, inis, knobs, skip, only, phpFPM, build                             []string
	mix                                                                         mixFlags
	budget, p99, timeout                                                        time.Duration
	rate, minEffect, alpha                                                      float64
	json, noScreen, screen, profile, builds, ratePeak                           bool
}

func newTuneCmd() *cobra.Command {
	var f tuneFlags
	cmd := &cobra.Command{
		Use:   "tune [APP|PRESET]",
		Short: "Size the php-fpm pool and decide the knobs that matter, with evidence",
		Long: `Tune APP (a docroot with a front controller, or a prepared workload preset by name, whose URLs, content
markers and services come with it; the bundled demo app when omitted): serve it with nginx + php-fpm
in private stacks, measure throughput against concurrency on a large pool (the knee), size pm.max_children from
the knee, the memory per worker and any --p99 goal at --rate, then decide each knob by a race of its values
against the best so far, in interleaved rounds: each comparison stops as soon as its confidence sequence
decides (big effects in a few rounds), better or worse by at least --min-effect, no_difference (the interval
within +-min-effect), or inconclusive when the knob's share of the budget runs out (with what would decide it);
a value that fails is error. CPU-only knobs (opcache, jit, preload, validate_timestamps, huge_code_pages, the
PHP binary, ini settings) are decided on requests per CPU-second of php-fpm, the others on requests/s served
(failed requests do not count); pm and max_children on their own pools, the other throughput knobs on a static
pool of the configuration's size (a dynamic pool churns between interleaved trials). One error budget, --alpha, covers every verdict of the run.
The knobs, in the order tried: max_children (the knee's neighbours), php (when --php-fpm is given twice or
more, or --build: a PHP built first, outside the budget, trained on this run's mix), opcache, jit, pm, listen (unix or TCP), keepalive (nginx to php-fpm), preload (when the app ships
preload.php), validate_timestamps, opcache_memory (when the app fills opcache), huge_code_pages (credited only
when smaps shows PHP's text on huge pages), max_requests, fastcgi_buffers (when a response outgrows nginx's
buffers), realpath_cache_size (when the app fills it) and backlog (when connections could overflow it), plus any
--knob (values you name are tried whatever those conditions say). A knob that cannot matter here is reported as not tried, with the reason;
when the budget cannot cover them all, the last are left out and the report says which budget would do.
Finally the recommendation is compared with Debian's defaults and the "static, 2 x cores" rule of thumb.
The run dir gets php-fpm-pool.conf, php.ini and nginx-upstream.conf (checked with php-fpm -t and nginx -t),
result.json (schema phptune/tune/v1) and report.html (the results as one self-contained page; phptune report
re-renders it).

Results hold for this host: measure again before applying them elsewhere. phptune never changes system
configuration. Ctrl-C stops every process and keeps the results so far (exit 130).`,
		Example: `  phptune tune
  phptune tune ./myapp --url / --url /blog/=3 --budget 10m --memory 4GiB
  phptune tune wordpress
  phptune tune ./myapp --from-access-log /var/log/nginx/access.log --log-exclude '^/admin/'
  phptune tune ./myapp --url-file urls.yaml
  phptune tune ./myapp --from-pool /etc/php/8.2/fpm/pool.d/www.conf --knob max_requests=0,500
  phptune tune ./myapp --p99 200ms --rate 300
  phptune tune ./myapp --url / --url /blog/ --build pgo`,
		Args: cobra.MaximumNArgs(1),
		RunE: run(func(cmd *cobra.Command, args []string) error { return runTune(cmd.Context(), f, args) }),
	}
	fl := cmd.Flags()
	fl.StringVar(&f.front, "front", "", "front controller, relative to the docroot (default index.php, or the preset's)")
	f.mix.register(fl, "a URL path to load, PATH[=WEIGHT] (repeatable; default / or a preset's mix)")
	fl.StringVar(&f.check, "expect-body", "", "regular expression every response must match (a preset's URLs have their own)")
	fl.StringVarP(&f.method, "method", "m", "GET", "request method")
	fl.StringArrayVarP(&f.headers, "header", "H", nil, "request header \"Name: value\" (repeatable)")
	fl.StringVar(&f.bodyFile, "body", "", "request body from this file")
	fl.StringArrayVar(&f.phpFPM, "php-fpm", nil, "php-fpm binary (default: the newest installed php-fpm8.x); twice or more: the builds compete as the knob php")
	fl.BoolVar(&f.builds, "builds", false, "let the installed php-fpm and the variants in phptune build's cache compete as the knob php")
	fl.StringSliceVar(&f.build, "build", nil, "build (or take from the cache) PHP trained on this run's mix first, outside the budget, and race it as the knob php: pgo, pgo+lto, pgo+bolt")
	fl.StringVar(&f.nginx, "nginx", "", "nginx binary")
	fl.StringVar(&f.user, "user", "", "user for the workers when run as root (default www-data)")
	fl.StringVar(&f.fromPool, "from-pool", "", "start from this php-fpm pool file instead of Debian's defaults")
	fl.StringVar(&f.fromINI, "from-ini", "", "start from the settings of this php.ini-style file")
	fl.StringArrayVar(&f.inis, "ini", nil, "pin a setting KEY=VALUE (repeatable; never changed)")
	fl.StringArrayVar(&f.knobs, "knob", nil, "sweep a knob NAME=V1,V2,... from V1 (a knob above, or any ini setting; repeatable; opcache_memory values are MEM/STRINGS/FILES, as in 512/32/40000); one value pins it, max_children included")
	fl.StringSliceVar(&f.skip, "skip", nil, "knobs not to decide, e.g. --skip listen,keepalive")
	fl.BoolVar(&f.profile, "profile", false, "after tuning, profile the starting point and the recommendation per request (syscalls, instructions, memory, opcache; in report.html)")
	fl.BoolVar(&f.noScreen, "no-screen", false, "give CPU-only knobs timed trials without first counting their work per request")
	fl.BoolVar(&f.screen, "screen", false, "count CPU-only candidates' work per request first even with a budget under 5 minutes")
	fl.StringSliceVar(&f.only, "only", nil, "decide only these knobs (and any --knob), e.g. --only opcache,jit; --only none sizes the pool alone")
	fl.DurationVar(&f.budget, "budget", 10*time.Minute, "bound on the whole run")
	fl.StringVar(&f.memory, "memory", "", "memory the pool may use, e.g. 4GiB or 512MiB (default: MemAvailable less a reserve)")
	fl.DurationVar(&f.p99, "p99", 0, "latency goal, judged open-loop at --rate: met when the p99's 95% interval (failed requests counted as the timeout) is below it, else exit 3")
	fl.Var(rateValue{&f.rate, &f.ratePeak}, "rate", "requests/s at which --p99 is judged, or peak: the access log's busiest second")
	fl.Float64Var(&f.minEffect, "min-effect", 100*tune.DefaultMinEffect, "smallest change in % that counts as better or worse; no_difference means within it")
	fl.Float64Var(&f.alpha, "alpha", stats.DefaultAlpha, "error budget of the run: the chance, at most, that any verdict is wrong")
	fl.DurationVar(&f.timeout, "timeout", 10*time.Second, "per-request timeout")
	fl.StringVar(&f.out, "out", "", "run dir for the files (default ./phptune-results/tune-TIMESTAMP)")
	fl.BoolVar(&f.json, "json", false, "print result.json to stdout instead of the summary")
	return cmd
}

func runTune(ctx context.Context, f tuneFlags, args []string) error {
	app, err := resolveApp(args)
	if err != nil {
		return err
	}
	o, err := f.options(app)
	if err != nil {
		return err
	}
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
		if err := writeTuneFiles(ctx, out, res, o.Stack); err != nil {
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
		holds += ", php-fpm-pool.conf, php.ini, nginx-upstream.conf"
	}
	end := ending{dir: out, json: f.json, holds: holds, text: func(w io.Writer) { report.Tune(w, res) },
		pages: func(dir string) error { return writeTuneReport(dir, res) }}
	if err := end.finish(res); err != nil {
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

// options turns the flags and the app into tune's options: the stack, the load, the starting point, the knobs
// (with the PHP binaries to race), screening and the memory to plan the pool in; and checks that php-fpm and
// nginx are there before anything starts.
func (f tuneFlags) options(app *appSpec) (o tune.Options, err error) {
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
		Alpha: f.alpha, Timeout: f.timeout, Pins: map[string]string{}}
	if f.minEffect < 0 {
		return o, exitcode.UsageErrorf("--min-effect must not be negative")
	}
	for _, v := range f.build {
		if !slices.Contains(buildVariants, v) {
			return o, exitcode.UsageErrorf("--build %s: want pgo, pgo+lto, pgo+bolt or baseline", v)
		}
	}
	if len(f.build) > 0 && slices.Contains(f.skip, "php") {
		return o, exitcode.UsageErrorf("--build and --skip php: the builds race as the knob php")
	}
	if err := f.load(&o, app); err != nil {
		return o, err
	}
	if err := f.logLoad(&o); err != nil {
		return o, err
	}
	// The starting point and the knobs.
	o.BaseName = "Debian's defaults"
	if f.fromPool != "" || f.fromINI != "" {
		o.BaseName = "your configuration"
	}
	if o.Base, err = baseConfig(f.fromPool, f.fromINI, f.inis, o.Pins); err != nil {
		return o, err
	}
	if len(binaries) > 1 {
		o.Base.PHPFPM = binaries[0]
	}
	if o.Knobs, err = f.knobSet(&o, knob.All(preloadScript(sc), binaries)); err != nil {
		return o, err
	}
	o.ForceScreen = f.screen
	if f.screen && f.noScreen {
		return o, exitcode.UsageErrorf("--screen and --no-screen: give one of them")
	}
	if !f.noScreen {
		var missing string
		if o.Screen, missing = screener(sc, func() []load.MixItem { return o.URLs }, o.Request); o.Screen == nil {
			fmt.Fprintf(os.Stderr, "phptune tune: %s is missing, so CPU-only knobs get timed trials without screening (apt-get install %s)\n", missing, missing)
		}
	}
	if f.memory != "" {
		if o.Memory, err = parseMemory(f.memory); err != nil {
			return o, err
		}
	} else if avail, err := measure.MemAvailable(); err == nil {
		o.Memory = avail - max(avail/10, 512<<20)
	}
	// Prerequisites before anything starts.
	if _, err := stack.FindPHPFPM(sc.PHPFPM); err != nil {
		return o, err
	}
	if _, err := stack.FindNginx(sc.Nginx); err != nil {
		return o, err
	}
	return o, nil
}

// load fills o's request and URL mix: the flags' (URLs, a URL file, access logs), else the preset's (with its
// login), else /.
func (f tuneFlags) load(o *tune.Options, app *appSpec) error {
	var check *regexp.Regexp
	var err error
	if f.check != "" {
		if check, err = regexp.Compile(f.check); err != nil {
			return exitcode.UsageErrorf("--expect-body: %v", err)
		}
	}
	if o.Request, err = parseRequest(f.method, f.headers, f.bodyFile, true); err != nil {
		return err
	}
	if o.URLs, o.LogIn, err = f.mix.build(o.Request, check, os.Stderr); err != nil {
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

func knobNames(ks []knob.Knob) string {
	var names []string
	for _, k := range ks {
		names = append(names, k.Name)
	}
	return strings.Join(names, ", ")
}

// writeTuneFiles writes the recommendation as files for a real installation, each checked by the server that
// will read it.
func writeTuneFiles(ctx context.Context, out string, res *tune.Result, sc stack.Config) error {
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
	t := knob.Target{Workers: res.Environment.Host.CPUs}
	if sc.App != "" {
		t.Docroot, _ = filepath.Abs(sc.App)
	}
	files := res.Recommendation.Render(t, header)
	if err := stack.CheckFPMPool(ctx, fpm, files.Pool); err != nil {
		return fmt.Errorf("generated pool file: %w", err)
	}
	if err := stack.CheckNginxUpstream(ctx, ngx, files.Nginx, res.Recommendation.Location()); err != nil {
		return fmt.Errorf("generated nginx snippet: %w", err)
	}
	res.Files = map[string]string{}
	for name, text := range map[string]string{"php-fpm-pool.conf": files.Pool, "php.ini": files.INI, "nginx-upstream.conf": files.Nginx} {
		if err := writeAtomic(filepath.Join(out, name), []byte(text)); err != nil {
			return err
		}
		res.Files[name] = filepath.Join(out, name)
	}
	return nil
}

// parseMemory reads --memory: a size such as 4GiB, 512MiB or 512M.
func parseMemory(s string) (int64, error) {
	if v, err := bytesize.Parse(s); err == nil && v > 0 {
		return v, nil
	}
	return 0, exitcode.UsageErrorf("--memory %q: want a size such as 4GiB or 512MiB", s)
}
