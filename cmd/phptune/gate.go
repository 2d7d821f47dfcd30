package main

import (
	"bytes"
	"cmp"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/phptune/phptune/internal/cli"
	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/gate"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/stack"
	"github.com/phptune/phptune/internal/stats"
	"github.com/phptune/phptune/internal/workload"
)

type gateFlags struct {
	front, expectBody, method, bodyFile, git, docroot, phpFPM, nginx, user, out, markdown, junit, preset string
	headers, writable                                                                                    []string
	mix                                                                                                  mixFlags
	budget, timeout                                                                                      time.Duration
	minEffect, alpha                                                                                     float64
	json, annotations, noLatency, failFast                                                               bool
}

func newGateCmd(s *streams, runF runFunc[gateFlags]) *cobra.Command {
	if runF == nil {
		runF = s.runGate
	}
	var f gateFlags
	cmd := &cobra.Command{
		Use:   "gate OLD NEW",
		Short: "Did a change make the app slower? Two versions raced on CPU a request and p99 latency, a verdict for CI",
		Example: `  phptune gate ./old ./new --url / --url /blog/=3            # two docroots
  phptune gate main HEAD --git . --docroot public --url-file urls.yaml   # two revisions of this checkout
  phptune gate ./old ./new --url / --markdown "$GITHUB_STEP_SUMMARY" --junit gate.xml --annotations
  phptune gate ./old ./new --from-access-log access.log --budget 5m --min-effect 5
  phptune gate ./wp-old ./wp-new --preset wordpress          # the preset's pages, markers, login and database`,
		Long: `Serves OLD and NEW (two docroots, or with --git two revisions checked out as worktrees) side by side with the
same PHP and configuration in private nginx + php-fpm stacks, checks that every URL answers in both (2xx, and
--expect-body's marker), then races them, for the mix and each URL, in duet rounds on fresh stacks (both
versions loaded at once, their workers spread over the CPUs: a noisy runner slows both alike) until each is
decided or --budget ends, on php-fpm's CPU time a request and the p99 latency at a fixed rate (half the slower
version's throughput, both versions at once; in a third of the time). One error budget (--alpha) covers all.

EXIT CODES
0 NEW shown not worse (by more than --min-effect) on the mix and every URL: its CPU shown not worse, its p99
neither shown worse nor leaning worse; 3 NEW shown worse on one of them, on either figure; 4 undecided in the
budget (the job chooses); 1 a page fails in either version, or the run failed; 2 bad usage (nothing started);
130 interrupted (the results so far kept).

FILES WRITTEN
result.json in --out; --markdown FILE (appended to $GITHUB_STEP_SUMMARY), --junit FILE (a test case per
comparison: worse fails, undecided is skipped); --annotations: ::error lines for what got worse.`,
		Args: cli.Args(2, 2, "OLD and NEW, two docroots (with --git, two revisions)"),
		RunE: run(func(cmd *cobra.Command, args []string) error { return runF(cmd.Context(), f, args) }),
	}
	cli.LearnMore(cmd, `docs/ci.md (GitHub Actions and GitLab CI, worked examples; what gate measures); docs/engine.md "Duet rounds";
docs/urls.md (URL files)`)
	fl := cmd.Flags()
	f.mix.register(fl, "a URL path to race, `PATH[=WEIGHT]` (repeatable)")
	fl.StringVar(&f.expectBody, "expect-body", "", "a `REGEX` every response must match in both versions")
	fl.StringVarP(&f.method, "method", "m", "GET", "request `METHOD`")
	fl.StringArrayVarP(&f.headers, "header", "H", nil, "request header `\"NAME: VALUE\"` (repeatable)")
	fl.StringVar(&f.bodyFile, "body", "", "request body from this `FILE`")
	fl.StringVar(&f.front, "front", "", "front controller `PATH`, relative to the docroot (default index.php, or the preset's)")
	fl.StringVar(&f.preset, "preset", "", "versions of a workload preset's app (phptune workload list): race its `NAME`'s pages "+
		"with their markers and login (unless --url and the like are given), with its services (a database) running")
	cli.FlagGroup(fl, "WHAT TO LOAD", "url", "url-file", "from-access-log", "log-format", "log-top", "log-exclude", "log-keep",
		"method", "header", "body", "expect-body", "front", "preset")

	fl.StringVar(&f.git, "git", "", "OLD and NEW are revisions of this git `REPO` (a commit, branch or tag each), checked out as worktrees")
	fl.StringVar(&f.docroot, "docroot", "", "with --git, the docroot's `SUBDIR` in each checkout (public, web; default the top)")
	fl.StringArrayVar(&f.writable, "writable", nil, "a `PATH` in the docroot the workers may write, a cache or uploads (repeatable): "+
		"each stack's copy gets its own")
	fl.StringVar(&f.phpFPM, "php-fpm", "", "php-fpm `BINARY` both versions run on (default: the newest php-fpm8.x)")
	fl.StringVar(&f.nginx, "nginx", "", "nginx `BINARY` (default: /usr/sbin/nginx)")
	fl.StringVar(&f.user, "user", "", "`USER` for the workers when run as root (default www-data)")
	cli.FlagGroup(fl, "THE VERSIONS", "git", "docroot", "writable", "php-fpm", "nginx", "user")

	fl.DurationVar(&f.budget, "budget", 2*time.Minute, "bound on the whole run, the CPU and the latency trials")
	fl.Float64Var(&f.minEffect, "min-effect", defaultMinEffectPct, "smallest change of CPU a request, and of the p99 "+
		"latency, that counts, in `PERCENT`")
	fl.Float64Var(&f.alpha, "alpha", stats.DefaultAlpha, alphaUsage)
	fl.DurationVar(&f.timeout, "timeout", load.DefaultTimeout, timeoutUsage)
	fl.BoolVar(&f.noLatency, "no-latency", false, "race CPU a request alone, no p99 at a fixed rate (more rounds in the budget)")
	fl.BoolVar(&f.failFast, "fail-fast", false, "stop once the mix or a URL is shown worse (exit 3 is then certain); "+
		"the others as they stood")
	cli.FlagGroup(fl, "HOW LONG AND HOW SURE", "budget", "min-effect", "alpha", "timeout", "no-latency", "fail-fast")

	fl.StringVar(&f.out, "out", "", "run `DIR` for result.json (default ./phptune-results/gate-TIMESTAMP)")
	fl.StringVar(&f.markdown, "markdown", "", "write the summary as Markdown to `FILE` ($GITHUB_STEP_SUMMARY: appended)")
	fl.StringVar(&f.junit, "junit", "", "write JUnit XML to `FILE`: a test case per comparison")
	fl.BoolVar(&f.annotations, "annotations", false, "print GitHub annotations (::error) for what got worse (default when GITHUB_ACTIONS=true)")
	fl.BoolVar(&f.json, "json", false, "print result.json to stdout instead of the summary")
	cli.FlagGroup(fl, "OUTPUT", "out", "markdown", "junit", "annotations", "json")
	return cmd
}

func (s *streams) runGate(ctx context.Context, f gateFlags, args []string) error {
	// What reading the input says (an access log's summary) is held until the input is known to be good.
	var notes bytes.Buffer
	o, app, err := f.options(&notes)
	if err != nil {
		return err
	}
	var trees *gate.Trees
	if f.git != "" {
		if trees, err = o.CheckOutVersions(ctx, f.git, f.docroot, [2]string{args[0], args[1]}); err != nil {
			return err
		}
		defer trees.Remove()
	} else {
		if f.docroot != "" {
			return exitcode.UsageErrorf("--docroot %s is the docroot inside each --git checkout: give --git REPO, or the docroots as OLD and NEW", f.docroot)
		}
		o.Old.Dir, o.New.Dir = args[0], args[1]
		if err := o.Check(); err != nil {
			return err
		}
	}
	s.err.Write(notes.Bytes())
	out, release, err := cli.OpenRunDir(f.out, "gate")
	if err != nil {
		return err
	}
	defer release()
	defer load.SetProcs(0)()
	// The preset's services (its database) for the whole run, both versions', stopped on every path.
	svc, err := app.StartServices(ctx)
	defer svc.Stop(context.Background())
	if err != nil {
		return err
	}
	line := cli.NewStatusLine(s.err)
	o.Progress = func(st gate.Status) {
		line.Step(st.Phase, "gate: %s/%s  %s", st.Elapsed.Round(time.Second), o.Budget, st.Detail)
	}
	var res *gate.Result
	runErr := svc.During(ctx, func(ctx context.Context) (err error) {
		res, err = gate.Run(ctx, o)
		return err
	})
	line.Clear()
	if res == nil {
		return runErr
	}
	res.CommandLine = s.argv
	if err := f.write(s, out, res); err != nil {
		return err
	}
	if runErr != nil {
		return runErr
	}
	return res.Exit()
}

// options are gate's options from the flags, every one checked but the versions, and the app whose services
// the run needs (a plain docroot's: none); what reading the URLs says goes to notes.
func (f gateFlags) options(notes io.Writer) (gate.Options, *workload.App, error) {
	o := gate.Options{Budget: f.budget, MinEffect: f.minEffect / 100, Alpha: f.alpha, Timeout: f.timeout,
		NoLatency: f.noLatency, FailFast: f.failFast, Old: gate.Version{Label: "OLD"}, New: gate.Version{Label: "NEW"}}
	o.Stack = stack.Config{Front: f.front, PHPFPM: f.phpFPM, Nginx: f.nginx, User: f.user, Writable: f.writable}
	app := &workload.App{}
	if f.preset != "" {
		var err error
		if app, err = workload.PresetApp(f.preset); err != nil {
			return o, &workload.App{}, err
		}
		o.Stack.Front = cmp.Or(f.front, app.Stack.Front)
		o.Stack.Writable = append(slices.Clone(app.Stack.Writable), f.writable...)
	}
	check, err := expectBody(f.expectBody)
	if err != nil {
		return o, app, err
	}
	if o.Request, err = load.ParseRequest(f.method, f.headers, f.bodyFile, true); err != nil {
		return o, app, err
	}
	var login loginFunc
	switch {
	case f.mix.given():
		o.URLs, login, err = f.mix.build(o.Request, check, notes)
	case f.preset != "":
		o.URLs, login, err = app.Mix(o.Request, check)
	default:
		err = exitcode.UsageErrorf("no URL to race: give --url PATH (repeatable), --url-file, --from-access-log or --preset")
	}
	if err != nil {
		return o, app, err
	}
	if login != nil {
		o.LogIn = login // each version logs in on its first stack
	}
	if err := o.CheckSettings(); err != nil {
		return o, app, err
	}
	for _, p := range []string{f.markdown, f.junit} {
		if p == "" {
			continue
		}
		if st, err := os.Stat(filepath.Dir(p)); err != nil || !st.IsDir() {
			return o, app, exitcode.UsageErrorf("%s: its directory does not exist", p)
		}
	}
	// Prerequisites before anything starts.
	if _, err := stack.FindPHPFPM(f.phpFPM); err != nil {
		return o, app, err
	}
	_, err = stack.FindNginx(f.nginx)
	return o, app, err
}

// write writes result.json into out, the Markdown, the JUnit XML, then the summary (or the JSON) and the
// annotations on s.out.
func (f gateFlags) write(s *streams, out string, res *gate.Result) error {
	if f.markdown != "" {
		if err := res.SaveMarkdown(f.markdown); err != nil {
			return err
		}
	}
	if f.junit != "" {
		if err := res.SaveJUnit(f.junit); err != nil {
			return err
		}
	}
	end := ending{out: s.out, dir: out, json: f.json, holds: "result.json", text: func(w io.Writer) { res.WriteText(w) }}
	if err := end.finish(res); err != nil {
		return err
	}
	if f.annotations || os.Getenv("GITHUB_ACTIONS") == "true" {
		w := s.out
		if f.json {
			w = s.err // stdout is the JSON
		}
		return res.WriteAnnotations(w)
	}
	return nil
}
