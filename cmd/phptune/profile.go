package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/phptune/phptune/internal/cli"
	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/profile"
	"github.com/phptune/phptune/internal/report"
	"github.com/phptune/phptune/internal/workload"
)

type profileFlags struct {
	front, phpFPM, phpCGI, user, fromPool, fromINI, out, method, bodyFile string
	headers, inis, knobs, compares, skip                                  []string
	mix                                                                   mixFlags
	requests, warmup, instrWarmup, instrN, functions                      int
	slowlog, timeout                                                      time.Duration
	json, wall                                                            bool
}

func newProfileCmd(s *streams, runF runFunc[profileFlags]) *cobra.Command {
	if runF == nil {
		runF = s.runProfile
	}
	var f profileFlags
	cmd := &cobra.Command{
		Use:   "profile [APP]",
		Short: "Show why a configuration is fast or slow, per request: syscalls, instructions, memory, opcache",
		Long: `Profiles APP (a docroot, a prepared workload preset, or the bundled demo app when omitted) under a baseline
configuration (Debian's pool, or --from-pool/--from-ini, with any --knob and --ini) and under each --compare
variant beside it, per request: system calls (strace on php-fpm), instructions (callgrind on php-cgi, start-up
excluded), memory per worker, opcache's state and huge pages; with --wall, wall-clock and CPU time per PHP
function (excimer). A variant that fails shows its error and the others are still reported (exit 1).

NEEDS
strace, valgrind and php-cgi of php-fpm's version (apt-get install strace valgrind php8.2-cgi); php-excimer for
--wall. A missing one is named with its package (exit 2).`,
		Example: `  phptune profile --compare opcache=off                    # the demo app, and the same with opcache off
  phptune profile ./myapp --url / --url /blog/=3 --compare jit=tracing --functions
  phptune profile ./myapp --knob opcache.validate_timestamps=1 --compare opcache.validate_timestamps=0 --json`,
		Args: cli.Args(0, 1, "APP, a docroot or a preset's name"),
		RunE: run(func(cmd *cobra.Command, args []string) error { return runF(cmd.Context(), f, args) }),
	}
	cli.LearnMore(cmd, `docs/profile.md (each measure, what it needs, the JSON)`)
	fl := cmd.Flags()
	fl.StringArrayVar(&f.compares, "compare", nil, "a variant: the baseline with `KNOB=VALUE` (repeatable: one variant each)")
	fl.StringArrayVar(&f.knobs, "knob", nil, "pin a knob of the baseline, `NAME=VALUE`: a knob tune decides or an ini directive (repeatable)")
	fl.StringArrayVar(&f.inis, "ini", nil, "an ini setting `KEY=VALUE` for every variant (repeatable)")
	fl.StringVar(&f.fromPool, "from-pool", "", "start from this php-fpm pool `FILE` instead of Debian's defaults")
	fl.StringVar(&f.fromINI, "from-ini", "", "start from the settings of this php.ini-style `FILE`")
	cli.FlagGroup(fl, "CONFIGURATIONS", "compare", "knob", "ini", "from-pool", "from-ini")
	fl.StringVar(&f.front, "front", "", "front controller `PATH`, relative to the docroot (default index.php, or the preset's)")
	f.mix.register(fl, "a URL path to profile, `PATH[=WEIGHT]` (repeatable; default / or the demo's mix)")
	fl.StringVarP(&f.method, "method", "m", "GET", "request `METHOD`")
	fl.StringArrayVarP(&f.headers, "header", "H", nil, "request header `\"NAME: VALUE\"` (repeatable)")
	fl.StringVar(&f.bodyFile, "body", "", "request body from this `FILE`")
	cli.FlagGroup(fl, "WHAT TO LOAD", "front", "url", "url-file", "from-access-log", "log-format", "log-top", "log-exclude", "log-keep",
		"method", "header", "body")
	fl.StringSliceVar(&f.skip, "without", nil, "`PARTS` to leave out: syscalls, instructions")
	cli.DeprecatedAlias(fl, "skip", "without")
	fl.IntVar(&f.requests, "requests", 200, "requests per variant under strace")
	fl.IntVar(&f.warmup, "warmup-rounds", 5, "rounds of the URLs before the traced requests")
	cli.DeprecatedAlias(fl, "warmup", "warmup-rounds")
	fl.IntVar(&f.instrWarmup, "instr-warmup", 2, "requests run first under callgrind and not counted")
	fl.IntVar(&f.instrN, "instr-n", 3, "requests counted after the warm-up (their median is the count)")
	fl.IntVar(&f.functions, "functions", 0, "show the top `N` functions by inclusive instructions (--functions alone: 15)")
	fl.Lookup("functions").NoOptDefVal = "15"
	fl.DurationVar(&f.slowlog, "slowlog", 0, "also run the requests untraced with php-fpm's slowlog at this timeout (whole seconds, e.g. 1s)")
	fl.BoolVar(&f.wall, "wall", false, "also sample wall-clock and CPU time per PHP function with excimer, on a stack of its own")
	fl.DurationVar(&f.timeout, "timeout", load.DefaultTimeout, timeoutUsage)
	cli.FlagGroup(fl, "WHAT TO MEASURE", "without", "requests", "warmup-rounds", "instr-warmup", "instr-n", "functions", "slowlog", "wall", "timeout")
	fl.StringVar(&f.phpFPM, "php-fpm", "", "php-fpm `BINARY` (default: the newest php-fpm8.x)")
	fl.StringVar(&f.phpCGI, "php-cgi", "", "php-cgi `BINARY` for the instruction counts (default: php-fpm's version)")
	fl.StringVar(&f.user, "user", "", "`USER` for the workers when run as root (default www-data)")
	fl.StringVar(&f.out, "out", "", "write result.json into this `DIR`")
	fl.BoolVar(&f.json, "json", false, "print the result as JSON (schema phptune/profile/v1) instead of the tables")
	return cmd
}

func (s *streams) runProfile(ctx context.Context, f profileFlags, args []string) error {
	app, err := workload.Resolve(args)
	if err != nil {
		return err
	}
	sc, name := app.Stack, app.Name
	sc.PHPFPM, sc.User = f.phpFPM, f.user
	if f.front != "" {
		sc.Front = f.front
	}
	o := profile.Options{Stack: sc, AppName: name, Requests: f.requests, Warmup: f.warmup, InstrWarmup: f.instrWarmup,
		InstrN: f.instrN, Functions: f.functions, PHPCGI: f.phpCGI, Slowlog: f.slowlog, Wall: f.wall, Timeout: f.timeout}
	if f.requests < 1 || f.warmup < 1 || f.instrWarmup < 1 || f.instrN < 1 || f.functions < 0 {
		return exitcode.UsageErrorf("--requests, --warmup-rounds, --instr-warmup and --instr-n must be at least 1, --functions not negative")
	}
	if err := o.Without(f.skip); err != nil {
		return err
	}
	if o.Request, err = load.ParseRequest(f.method, f.headers, f.bodyFile, false); err != nil {
		return err
	}
	var login loginFunc
	if o.URLs, login, err = f.mix.build(o.Request, nil, s.err); err != nil {
		return err
	}
	if login != nil {
		return exitcode.UsageErrorf("--url-file: profile speaks FastCGI to php-fpm and sends no login: give the session cookie in the file's cookies, or profile logged-in pages with tune --profile")
	}
	if len(o.URLs) == 0 {
		o.URLs = app.Paths()
	}
	known := knob.All(knob.PreloadScript(sc), nil)
	if err := knob.CheckNames(ctx, sc.PHPFPM, known, map[string][]string{"--knob": f.knobs, "--compare": f.compares}, f.inis); err != nil {
		return err
	}
	base, err := knob.Start(f.fromPool, "", f.fromINI, "", f.inis, nil)
	if err != nil {
		return err
	}
	if o.Variants, err = profile.Variants(base, known, f.knobs, f.compares); err != nil {
		return err
	}
	release, err := cli.OpenOut(f.out)
	if err != nil {
		return err
	}
	defer release()

	// The app's own services (a preset's database) for the whole run, stopped on every path.
	svc, err := app.StartServices(ctx)
	defer svc.Stop(context.Background())
	if err != nil {
		return err
	}
	line := cli.NewStatusLine(s.err)
	o.Progress = func(variant, step string) { line.Set("profile: %s: %s", variant, step) }
	var res *profile.Result
	runErr := svc.During(ctx, func(ctx context.Context) (err error) {
		res, err = profile.Run(ctx, o)
		return err
	})
	line.Clear()
	if res == nil {
		return runErr
	}
	res.CommandLine = s.argv
	end := ending{out: s.out, dir: f.out, json: f.json, text: func(w io.Writer) { report.Profile(w, res) }}
	if err := end.finish(res); err != nil {
		return err
	}
	if runErr != nil {
		return runErr
	}
	if n := res.Failed(); n > 0 {
		if n == len(res.Variants) {
			return exitcode.WithCode(exitcode.Failed, errors.New("no variant could be profiled: "+res.Variants[0].Error))
		}
		return exitcode.WithCode(exitcode.Failed, fmt.Errorf("%d of %d variants failed (their errors are in the report)", n, len(res.Variants)))
	}
	return nil
}
