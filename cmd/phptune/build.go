package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/phptune/phptune/internal/cli"
	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/phpbuild"
	"github.com/phptune/phptune/internal/report"
	"github.com/phptune/phptune/internal/textline"
	"github.com/phptune/phptune/internal/workload"
	"github.com/phptune/phptune/workloads"
)

type buildFlags struct {
	debian, debianVersion, source, configureArgs, profFlags, holdoutApp, cache, out, make, train string
	variants, urls, holdout                                                                      []string
	mix                                                                                          mixFlags
	trainN, rounds, repeats, jobs                                                                int
	noVerify, noCallgrind, jit, installDeps, json, withDebian, noHuge                            bool
	throughputTrial, trainDuration                                                               time.Duration
	trainMode                                                                                    string
}

func newBuildCmd(s *streams, runF runFunc[buildFlags]) *cobra.Command {
	if runF == nil {
		runF = s.runBuild
	}
	var f buildFlags
	cmd := &cobra.Command{
		Use:   "build [APP|PRESET]",
		Short: "Build PHP optimised for your app (PGO trained on it) and verify the gain",
		Long: `Builds PHP from source (Debian's php8.2 source package by default, through a private apt configuration) into a
build cache, one prefix per variant: baseline (upstream flags) and pgo (trained with php-cgi -T over APP's URLs,
opcache on); --variants adds pgo+lto and pgo+bolt. Each variant must serve the demo app through its own php-fpm
before it is measured. Then verifies: time per request in interleaved rounds against the baseline on the
training URLs, held-out URLs and a guard (Zend/bench.php), each a verdict with its 95% interval. An unchanged
request reuses the cached build; an interrupted build leaves no half-installed prefix.

NEEDS
build-essential and PHP's build dependencies (--install-deps installs what is missing, listing it first);
bolt-16 and libbolt-16-dev for pgo+bolt.`,
		Example: `  phptune build                                      # the demo app: baseline and pgo, verified
  phptune build ./myapp --url / --url /blog/ --holdout-url /about
  phptune build wordpress --variants baseline,pgo,pgo+lto
  phptune tune ./myapp --builds                       # then let the cached builds race the installed php-fpm`,
		Args: cli.Args(0, 1, "APP, a docroot or a preset's name"),
		RunE: run(func(cmd *cobra.Command, args []string) error { return runF(cmd.Context(), f, args) }),
	}
	cli.LearnMore(cmd, `docs/build.md (variants, training, verification); docs/measurements.md (measured gains); docs/bolt.md`)
	registerBuildFlags(cmd.Flags(), &f)
	return cmd
}

// registerBuildFlags declares build's flags into fl, their defaults set in f.
func registerBuildFlags(fl *pflag.FlagSet, f *buildFlags) {
	fl.StringSliceVar(&f.variants, "variants", []string{phpbuild.Baseline, phpbuild.PGO}, "`VARIANTS`: baseline, pgo, pgo+lto, pgo+bolt")
	fl.StringVar(&f.debian, "debian", "php8.2", "Debian source `PACKAGE` to build (fetched with a private apt configuration)")
	fl.StringVar(&f.debianVersion, "debian-version", phpbuild.DefaultDebianVersion, "`VERSION` of the Debian source package")
	fl.StringVar(&f.source, "source", "", "PHP source `TARBALL` or directory (instead of --debian)")
	fl.StringVar(&f.configureArgs, "configure-args", "", "configure `ARGS` (default: lean, fpm + cgi + opcache + the app's extensions)")
	fl.StringVar(&f.profFlags, "prof-flags", phpbuild.DefaultProfFlags, "PROF_FLAGS of the optimised PGO build, `FLAGS` such as -fprofile-use")
	fl.BoolVar(&f.installDeps, "install-deps", false, "install missing build packages with apt-get")
	fl.IntVar(&f.jobs, "jobs", 0, "make -j (default: all CPUs)")
	fl.StringVar(&f.cache, "cache", "", "build cache `DIR` (default $XDG_CACHE_HOME/phptune/builds)")
	fl.StringVar(&f.make, "make", "make", "make program")
	_ = fl.MarkHidden("make")
	cli.FlagGroup(fl, "WHAT TO BUILD", "variants", "debian", "debian-version", "source", "configure-args", "prof-flags", "install-deps",
		"jobs", "cache")
	fl.StringVar(&f.train, "train", "", "the `APP` to train on: a docroot, a prepared workload preset or its directory (same as the APP argument)")
	fl.StringArrayVar(&f.urls, "url", nil, "training request `URI`, repeatable (default: a preset's URLs; for the demo app its HTML pages)")
	f.mix.registerLog(fl)
	fl.IntVar(&f.trainN, "train-n", 50, "training repeats per URL (php-cgi -T)")
	fl.StringVar(&f.trainMode, "train-mode", "cgi", "cgi: php-cgi -T over the URLs; live: that, then the instrumented php-fpm "+
		"under phptune's load (FPM's paths too)")
	fl.DurationVar(&f.trainDuration, "train-duration", 20*time.Second, "length of the live training load (--train-mode live)")
	fl.BoolVar(&f.jit, "jit", false, "train and verify with opcache.jit=tracing (as it will run)")
	cli.FlagGroup(fl, "TRAINING", "train", "url", "from-access-log", "log-format", "log-top", "log-exclude", "log-keep", "train-n",
		"train-mode", "train-duration", "jit")
	fl.StringArrayVar(&f.holdout, "holdout-url", nil, "held-out request `URI`, repeatable (default for the demo app: its API and form)")
	fl.StringVar(&f.holdoutApp, "holdout", "", "held-out `APP` (a docroot with index.php, or demo) for the held-out URLs "+
		"(default: APP; for a preset, the demo app)")
	fl.IntVar(&f.rounds, "rounds", 10, "the most interleaved verification rounds (at least 6; they stop once every comparison is decided)")
	fl.IntVar(&f.repeats, "repeats", 30, "timed repeats per URL in each round (php-cgi -T 5,N)")
	fl.DurationVar(&f.throughputTrial, "throughput-trial", 3*time.Second, "length of each throughput trial through php-fpm (0 skips throughput)")
	fl.BoolVar(&f.withDebian, "with-debian", false, "include Debian's own php-cgi in the comparison (automatic when the source is older)")
	fl.BoolVar(&f.noVerify, "no-verify", false, "build and smoke-test only")
	fl.BoolVar(&f.noCallgrind, "no-callgrind", false, "skip instructions per request (valgrind)")
	fl.BoolVar(&f.noHuge, "no-huge-code-pages", false, "skip verifying pgo with opcache.huge_code_pages=1 on top")
	cli.FlagGroup(fl, "VERIFICATION", "holdout-url", "holdout", "rounds", "repeats", "throughput-trial", "with-debian", "no-verify",
		"no-callgrind", "no-huge-code-pages")
	fl.StringVar(&f.out, "out", "", "`DIR` for report.html, result.json and build.log (default phptune-results/build-TIME)")
	fl.BoolVar(&f.json, "json", false, "print the result as JSON (schema phptune/build/v1)")
	cli.FlagGroup(fl, "OUTPUT", "out", "json")
}

// buildDefaults is build's flags as given no flag at all (tune --build starts from them).
func buildDefaults() buildFlags {
	var f buildFlags
	registerBuildFlags(pflag.NewFlagSet("build", pflag.ContinueOnError), &f)
	return f
}

func (s *streams) runBuild(ctx context.Context, f buildFlags, args []string) error {
	o, spec, err := f.options(args, s.err)
	if err != nil {
		return err
	}
	out, release, err := cli.OpenRunDir(f.out, "build")
	if err != nil {
		return err
	}
	defer release()
	logf, err := os.Create(filepath.Join(out, "build.log"))
	if err != nil {
		return err
	}
	defer logf.Close()
	o.Log = logf

	// The app's own services (a preset's database) for training and verification, stopped on every path.
	if spec != nil {
		svc, err := spec.StartServices(ctx)
		defer svc.Stop(context.Background())
		if err != nil {
			return err
		}
	}

	line := cli.NewStatusLine(s.err)
	var stop func()
	o.OnStep, stop = cli.Steps(line, logf, "build")
	res, runErr := phpbuild.Run(ctx, o)
	stop()
	if res == nil || (runErr != nil && len(res.Variants) == 0) {
		if runErr != nil {
			return fmt.Errorf("%w (log %s)", runErr, logf.Name())
		}
		return nil
	}
	if runErr != nil && ctx.Err() != nil {
		res.Partial = true
	}
	if res.Environment != nil {
		res.Environment.CommandLine = s.argv
	}
	end := ending{out: s.out, dir: out, json: f.json, holds: "report.html, result.json, build.log",
		page: func(w io.Writer) error { return report.BuildHTML(w, res) },
		text: func(w io.Writer) {
			report.Build(w, res)
			for _, v := range res.Variants {
				// An arm of a setting on another variant's binaries (pgo+huge_code_pages) has no binary of its
				// own: tune decides huge_code_pages itself.
				if v.Available && v.Name != phpbuild.Baseline && v.PHPFPM != "" && v.Of == "" {
					fmt.Fprintf(w, "  Try it: phptune tune --php-fpm %s\n", v.PHPFPM)
				}
			}
		}}
	if err := end.finish(res); err != nil {
		return err
	}
	if runErr != nil {
		return runErr
	}
	if b := res.Variant(phpbuild.Baseline); b != nil && !b.Available {
		return exitcode.WithCode(exitcode.Failed, fmt.Errorf("the baseline build failed: %s", textline.First(b.Reason)))
	}
	return nil
}

// options turns the flags and APP into the build's options: what to build, what to train on and hold out (a
// docroot's --url, a prepared preset's URLs, or the demo app's), and the app spec whose services run meanwhile.
func (f buildFlags) options(args []string, stderr io.Writer) (o phpbuild.Options, spec *workload.App, err error) {
	logged, err := f.mix.trainingURIs(stderr)
	if err != nil {
		return o, nil, err
	}
	f.urls = append(f.urls, logged...)
	o = phpbuild.Options{
		Debian: f.debian, DebianVersion: f.debianVersion, SourcePath: f.source, ProfFlags: f.profFlags,
		Variants: f.variants, TrainN: f.trainN, JIT: f.jit, Verify: !f.noVerify, Rounds: f.rounds, Repeats: f.repeats,
		Callgrind: !f.noCallgrind, Debian8: f.withDebian, InstallDeps: f.installDeps, Jobs: f.jobs, Make: f.make,
		SmokeApp: workloads.Demo(), Train: f.urls, Holdout: f.holdout, ThroughputTrial: f.throughputTrial,
		TrainMode: f.trainMode, TrainDuration: f.trainDuration, HugeCodePages: !f.noHuge,
	}
	if err := o.CheckAsked(); err != nil {
		return o, nil, err
	}
	if f.configureArgs != "" {
		o.ConfigureArgs = strings.Fields(f.configureArgs)
	}
	appArg := f.train
	if len(args) == 1 {
		if appArg != "" && appArg != args[0] {
			return o, nil, exitcode.UsageErrorf("APP %s and --train %s: give the app to train on once", args[0], appArg)
		}
		appArg = args[0]
	}
	if appArg != "" {
		if spec, err = workload.Resolve([]string{appArg}); err != nil {
			return o, nil, err
		}
	}
	if err := o.ForApp(spec, appArg, f.holdoutApp); err != nil {
		return o, nil, err
	}
	o.CacheDir = f.cache
	if o.CacheDir == "" {
		d, err := phpbuild.DefaultCacheDir()
		if err != nil {
			return o, nil, exitcode.UsageErrorf("%v", err)
		}
		o.CacheDir = d
	}
	return o, spec, nil
}
