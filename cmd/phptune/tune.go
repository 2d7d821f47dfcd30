package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/phptune/phptune/internal/apply"
	"github.com/phptune/phptune/internal/cli"
	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/phpbuild"
	"github.com/phptune/phptune/internal/report"
	"github.com/phptune/phptune/internal/stack"
	"github.com/phptune/phptune/internal/stats"
	"github.com/phptune/phptune/internal/tune"
	"github.com/phptune/phptune/internal/workload"
)

type tuneFlags struct {
	front, nginx, user, fromPool, prefix, fromINI, fromApache, fromSite, out, method, bodyFile, memory, expectBody, cgroup string
	headers, inis, knobs, skip, only, phpFPM, build                                                                        []string
	mix                                                                                                                    mixFlags
	budget, p99, timeout                                                                                                   time.Duration
	rate, minEffect, poolMargin, alpha                                                                                     float64
	json, noScreen, screen, profile, builds, ratePeak, noDuet, duetPin, verbose                                            bool

	soak string // --soak: a duration, off, or "" (a tenth of the budget)
}

func newTuneCmd(s *streams, runF runFunc[tuneFlags]) *cobra.Command {
	if runF == nil {
		runF = s.runTune
	}
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
		Long: `Serves APP (a docroot with a front controller the workers' user can read, a workload preset, or the demo
app when omitted) with nginx + php-fpm in private stacks, finds where throughput levels off, sizes the pool
from it and --memory, then races each knob's values in interleaved rounds until it is decided (better,
worse, no_difference) or its share of --budget runs out (inconclusive); server races Apache's runtimes when
installed; it, pm, keepalive and backlog refuse values whose p99 is shown worse. The recommendation is
compared with Debian's defaults and "2 x cores".

KNOBS, IN THE ORDER TRIED
` + tune.OrderText() + ` A knob that cannot matter here is not tried, with the reason.

FILES WRITTEN
php-fpm-pool.conf (php-fpm-NAME.conf: other files of the pool), php.ini and nginx-upstream.conf: the starting
files changed where php-fpm and nginx read them, checked by php-fpm -t and nginx -t (Apache's site and MPM files
where Apache wins); changes.diff, apply.txt (where each goes), report.html, result.json in --out.`,
		Args: cli.Args(0, 1, "APP, a docroot or a preset's name"),
		RunE: run(func(cmd *cobra.Command, args []string) error { return runF(cmd.Context(), f, args) }),
	}
	cli.LearnMore(cmd, `docs/tune.md (each knob's values, what is measured, the budget, applying); docs/runtimes.md (nginx or Apache);
docs/engine.md (how a race is decided and its error rates); docs/urls.md (URL files)`)
	fl := cmd.Flags()
	fl.StringVar(&f.front, "front", "", "front controller `PATH`, relative to the docroot (default index.php, or the preset's)")
	f.mix.register(fl, "a URL path to load, `PATH[=WEIGHT]` (repeatable; default / or a preset's mix)")
	fl.StringVar(&f.expectBody, "expect-body", "", "a `REGEX` every response must match (a preset's URLs have their own)")
	fl.StringVarP(&f.method, "method", "m", "GET", "request `METHOD`")
	fl.StringArrayVarP(&f.headers, "header", "H", nil, "request header `\"NAME: VALUE\"` (repeatable)")
	fl.StringVar(&f.bodyFile, "body", "", "request body from this `FILE`")
	cli.FlagGroup(fl, "WHAT TO LOAD", "url", "url-file", "from-access-log", "log-format", "log-top", "log-exclude", "log-keep",
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
	cli.FlagGroup(fl, "WHERE TO START", "from-pool", "from-ini", "from-site", "from-apache", "ini", "php-fpm", "builds", "nginx", "user")

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
		"request for max_requests (default: a tenth of a budget of 5m or more, within it, when max_requests is decided), or off")
	fl.DurationVar(&f.p99, "p99", 0, "latency goal judged open-loop at --rate: exit 3 unless the p99 is shown below it")
	fl.Var(cli.Rate{Rate: &f.rate, Peak: &f.ratePeak}, "rate", "open model: `RATE` requests/s at which --p99 is judged, or peak: the access log's busiest second")
	fl.BoolVar(&f.screen, "screen", false, "count CPU-only candidates' work per request first, even with a budget under 5 minutes")
	fl.BoolVar(&f.noScreen, "no-screen", false, "give CPU-only knobs timed trials without counting their work first")
	fl.BoolVar(&f.noDuet, "no-duet", false, "run every race's trials in turn only: no duet rounds for the CPU races, no split rounds "+
		"for goodput (both where the machine's noise cancels)")
	fl.BoolVar(&f.duetPin, "duet-pin", false, "pin each duet arm's php-fpm and nginx to a CPU share of its own, swapped "+
		"every round, where there are as many CPUs as arms (off: on a shared machine it made rounds noisier)")
	cli.FlagGroup(fl, "WHAT TO DECIDE", "knob", "skip", "only", "build", "memory", "cgroup", "soak", "p99", "rate", "screen", "no-screen")

	fl.DurationVar(&f.budget, "budget", 10*time.Minute, "bound on the whole run")
	fl.Float64Var(&f.minEffect, "min-effect", defaultMinEffectPct, minEffectUsage)
	fl.Float64Var(&f.poolMargin, "pool-margin", 100*tune.DefaultPoolMargin, "the pool size chosen is the smallest shown to serve "+
		"within this `PCT` of the best size's requests/s")
	fl.Float64Var(&f.alpha, "alpha", stats.DefaultAlpha, alphaUsage)
	fl.DurationVar(&f.timeout, "timeout", load.DefaultTimeout, timeoutUsage)
	cli.FlagGroup(fl, "HOW LONG AND HOW SURE", "budget", "min-effect", "pool-margin", "alpha", "timeout")

	fl.StringVar(&f.out, "out", "", "run `DIR` for the files (default ./phptune-results/tune-TIMESTAMP)")
	fl.BoolVar(&f.json, "json", false, "print result.json to stdout instead of the summary")
	fl.BoolVarP(&f.verbose, "verbose", "v", false, "print the whole account (the sweep, the pool size, memory, every knob's row), "+
		"not the answer alone")
	fl.BoolVar(&f.profile, "profile", false, "then profile the starting point and the recommendation per request (into report.html)")
	cli.FlagGroup(fl, "OUTPUT", "out", "json", "verbose", "profile")
	return cmd
}

func (s *streams) runTune(ctx context.Context, f tuneFlags, args []string) error {
	app, err := workload.Resolve(args)
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
	if app.Workload == nil { // a docroot of the user's, which a server must be able to serve (a preset's is our copy)
		if err := o.Stack.CheckServable(); err != nil {
			return err
		}
	}
	s.err.Write(notes.Bytes())
	f.screening(&o, func() []load.MixItem { return o.URLs }, s.err)
	out, release, err := cli.OpenRunDir(f.out, "tune")
	if err != nil {
		return err
	}
	defer release()
	defer load.SetProcs(0)()
	// The app's own services (a preset's database) for the whole run, stopped on every path.
	svc, err := app.StartServices(ctx)
	defer svc.Stop(context.Background())
	if err != nil {
		return err
	}

	line := cli.NewStatusLine(s.err)
	var builds []tune.Build
	if len(f.build) > 0 {
		if builds, err = buildForTune(ctx, args, o, f.build, out, line, s.err); err != nil {
			return err
		}
		if err := o.RaceBuilds(builds); err != nil {
			return err
		}
	}
	o.Progress = func(s tune.Status) {
		if s.Phase == "start" && !line.On() {
			return // a start that fails says so in its one-line error; a line before it would be noise
		}
		line.Step(s.Phase, "%s", s.Line())
	}
	o.KeepLogin() // the session, for --profile
	var res *tune.Result
	runErr := svc.During(ctx, func(ctx context.Context) (err error) {
		res, err = tune.Run(ctx, o)
		return err
	})
	line.Clear()
	if workload.ServiceDied(runErr) && res != nil {
		res.Partial = true
	}
	if res == nil || (runErr != nil && len(res.Trials) == 0 && len(res.Screens) == 0) {
		return runErr // nothing measured: nothing to keep
	}
	res.CommandLine, res.Builds = s.argv, builds
	if runErr == nil {
		from := apply.From{Pool: f.fromPool, Prefix: f.prefix, INI: f.fromINI, Site: f.fromSite, Docroot: o.Stack.App}
		if err := res.WriteFiles(ctx, out, o.Stack, from, report.ApplyText); err != nil {
			return err
		}
	}
	if runErr == nil && f.profile {
		runErr = tune.ProfileAfter(ctx, o, res, func(variant, step string) { line.Set("tune --profile: %s: %s", variant, step) })
		line.Clear()
	}
	report.KeepFinite(res)
	holds := "report.html, result.json"
	if runErr == nil {
		holds += ", " + strings.Join(apply.FileNames(res.Files), ", ")
	}
	text := report.TuneSummary
	if f.verbose {
		text = report.Tune
	}
	end := ending{out: s.out, dir: out, json: f.json, holds: holds, text: func(w io.Writer) { text(w, res) },
		page: func(w io.Writer) error { return report.TuneHTML(w, res, report.TuneFiles(out, res)) }}
	// result.json holds the answer the summary and report.html print, beside the measurements it is drawn from.
	if err := end.finish(report.RecordOf(res)); err != nil {
		return err
	}
	if runErr != nil {
		return runErr
	}
	return res.P99Check.Err()
}

// screening gives o its screener (tune.Options.UseScreener), unless --no-screen; a missing program is noted on
// stderr where screening would run. The caller has checked the input first.
func (f tuneFlags) screening(o *tune.Options, urls func() []load.MixItem, stderr io.Writer) {
	if f.noScreen {
		return
	}
	if missing := o.UseScreener(urls); missing != "" {
		fmt.Fprintf(stderr, "phptune tune: %s is missing, so CPU-only knobs get timed trials without screening (apt-get install %s)\n",
			missing, missing)
	}
}

// options turns the flags and the app into tune's options: the stack, the load (what reading it says goes to
// notes), the starting point, the knobs (with the PHP binaries to race) and the memory to plan the pool in; and
// checks that php-fpm and nginx are there before anything starts.
func (f tuneFlags) options(ctx context.Context, app *workload.App, notes io.Writer) (o tune.Options, err error) {
	sc, name := app.Stack, app.Name
	sc.Nginx, sc.User = f.nginx, f.user
	if f.front != "" {
		sc.Front = f.front
	}
	var binaries []string
	if f.builds {
		if f.phpFPM, err = phpbuild.WithCached(f.phpFPM); err != nil {
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
	if !(f.poolMargin > 0) {
		return o, exitcode.UsageErrorf("--pool-margin %g: want a percentage above 0, such as 5", f.poolMargin)
	}
	o = tune.Options{Stack: sc, AppName: name, Budget: f.budget, P99: f.p99, Rate: f.rate, MinEffect: f.minEffect / 100,
		PoolMargin: f.poolMargin / 100, Alpha: f.alpha, Timeout: f.timeout, Pins: map[string]string{}, Asked: map[string]bool{}}
	for _, v := range f.build {
		if !slices.Contains(phpbuild.Variants(), v) {
			return o, exitcode.UsageErrorf("--build %s: want pgo, pgo+lto, pgo+bolt or baseline", v)
		}
	}
	if len(f.build) > 0 && slices.Contains(f.skip, "php") {
		return o, exitcode.UsageErrorf("--build and --skip php: the builds race as the knob php")
	}
	if err := f.load(&o, app, notes); err != nil {
		return o, err
	}
	if err := o.UseLogLoad(f.mix.logLoad(), f.ratePeak); err != nil {
		return o, err
	}
	// The starting point and the knobs.
	known := knob.WithServer(knob.All(knob.PreloadScript(sc), binaries), sc.PHPFPM)
	if err := knob.CheckNames(ctx, sc.PHPFPM, known, map[string][]string{"--knob": f.knobs}, f.inis); err != nil {
		return o, err
	}
	if _, err := apply.ReadSite(f.fromSite, ""); err != nil { // read again at the end: checked before the run
		return o, err
	}
	if f.prefix != "" && f.fromPool == "" {
		return o, exitcode.UsageErrorf("--prefix %s is where --from-pool's relative includes are read from: give --from-pool FILE too", f.prefix)
	}
	if o.Base, err = knob.Start(f.fromPool, f.prefix, f.fromINI, f.fromApache, f.inis, o.Pins); err != nil {
		return o, err
	}
	if len(binaries) > 1 {
		o.Base.PHPFPM = binaries[0]
	}
	if o.Knobs, err = (knob.Choice{Knobs: f.knobs, Skip: f.skip, Only: f.only}).Apply(known, &o.Base, o.Pins, o.Asked); err != nil {
		return o, err
	}
	o.BaseName = knob.StartName(f.fromPool != "" || f.fromINI != "" || f.fromApache != "", o.Base)
	o.Knobs = knob.UnderServer(o.Knobs)
	if o.Soak, err = tune.ParseSoak(f.soak); err != nil {
		return o, err
	}
	o.ForceScreen = f.screen
	o.Duet = !f.noDuet
	o.Split = !f.noDuet
	o.DuetPin = f.duetPin && o.Duet
	o.DuetSpread = o.Duet && !o.DuetPin
	if f.screen && f.noScreen {
		return o, exitcode.UsageErrorf("--screen and --no-screen: give one of them")
	}
	if err := o.SizeForPlace(f.cgroup, f.memory); err != nil {
		return o, err
	}
	// Prerequisites before anything starts.
	if _, err := stack.FindPHPFPM(sc.PHPFPM); err != nil {
		return o, err
	}
	if _, err := stack.FindNginx(sc.Nginx); err != nil {
		return o, err
	}
	return o, knob.NeedsApache(o.Base, o.Stack, f.knobs)
}

// load fills o's request and URL mix: the flags' (URLs, a URL file, access logs), else the preset's (with its
// login), else /.
func (f tuneFlags) load(o *tune.Options, app *workload.App, notes io.Writer) error {
	check, err := expectBody(f.expectBody)
	if err != nil {
		return err
	}
	if o.Request, err = load.ParseRequest(f.method, f.headers, f.bodyFile, true); err != nil {
		return err
	}
	if o.URLs, o.LogIn, err = f.mix.build(o.Request, check, notes); err != nil {
		return err
	}
	if len(o.URLs) == 0 {
		o.URLs, o.LogIn, err = app.Mix(o.Request, check)
	}
	return err
}
