package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/phptune/phptune/internal/cli"
	"github.com/phptune/phptune/internal/compare"
	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/report"
	"github.com/phptune/phptune/internal/stats"
	"github.com/phptune/phptune/internal/tune"
)

type compareFlags struct {
	load        benchFlags
	interleave  bool
	rounds      int
	minEffect   float64
	alpha       float64
	failIfWorse bool
	json        bool
	out         string
}

func newCompareCmd(s *streams, runF runFunc[compareFlags]) *cobra.Command {
	if runF == nil {
		runF = s.runCompare
	}
	var f compareFlags
	cmd := &cobra.Command{
		Use:   "compare RESULT.json RESULT.json... | compare --interleave 'TARGET [FLAGS]' 'TARGET [FLAGS]'...",
		Short: "Put results side by side and say, metric by metric, better, worse or no difference",
		Example: `  phptune compare a/result.json b/result.json                  # bench results (bench --repeat 10 --out a)
  phptune compare tune-a/result.json tune-b/result.json        # two tune runs: knob by knob, do they agree
  phptune compare --interleave 'http://127.0.0.1:8080/' 'http://127.0.0.1:8081/' -c 8 -d 2s
  phptune compare --interleave 'unix:/tmp/a.sock:/srv/index.php' 'fcgi://127.0.0.1:9000/srv/index.php' --fail-if-worse`,
		Long: `Compares results with the first (the baseline): req/s and latency percentiles side by side, each with its change,
interval and verdict (better, worse, no_difference, inconclusive), all within one error budget (--alpha). With --interleave
each argument is an arm to run, a bench TARGET and optionally flags for that arm alone (quote each arm); flags
given to compare apply to every arm. The arms run in rounds, one trial of each a round, until every arm is
decided or --rounds run out; more than two arms race, and the report names the pick.`,
		Args: cli.Args(2, -1, "two results or more to compare (or, with --interleave, two targets)"),
		RunE: run(func(cmd *cobra.Command, args []string) error {
			f.load.durationSet = cmd.Flags().Changed("duration")
			return runF(cmd.Context(), f, args)
		}),
	}
	cli.LearnMore(cmd, `docs/compare.md (arms, verdicts, tune results knob by knob); docs/engine.md (the rounds, the intervals and their error rates)`)
	fl := cmd.Flags()
	fl.BoolVar(&f.interleave, "interleave", false, "run the arms given as arguments in interleaved trials, then compare")
	fl.IntVar(&f.rounds, "rounds", 20, "with --interleave: the most rounds (one trial of each arm a round); the run stops once every arm is decided")
	cli.DeprecatedAlias(fl, "repeat", "rounds")
	fl.Float64Var(&f.minEffect, "min-effect", defaultMinEffectPct, minEffectUsage)
	fl.Float64Var(&f.alpha, "alpha", stats.DefaultAlpha, alphaUsage)
	fl.BoolVar(&f.failIfWorse, "fail-if-worse", false, "exit 3 when any metric of any arm is worse than the baseline")
	cli.FlagGroup(fl, "COMPARE", "interleave", "rounds", "min-effect", "alpha", "fail-if-worse")
	registerLoadFlags(fl, &f.load)
	registerRunFlags(fl, &f.load)
	fl.BoolVar(&f.json, "json", false, "print the comparison as JSON (schema phptune/compare/v1)")
	fl.StringVar(&f.out, "out", "", "write compare.json (and with --interleave each arm's result) into this `DIR`")
	cli.FlagGroup(fl, "OUTPUT", "json", "out")
	return cmd
}

func (s *streams) runCompare(ctx context.Context, f compareFlags, args []string) error {
	if f.minEffect < 0 {
		return exitcode.UsageErrorf("--min-effect %v: want a percentage of 0 or more", f.minEffect)
	}
	if !(f.alpha > 0 && f.alpha < 1) {
		return exitcode.UsageErrorf("--alpha %g: want a chance between 0 and 1, such as 0.05", f.alpha)
	}
	names := compare.ArmNames(len(args))
	var results []*load.Result
	var arms []load.Options
	if f.interleave {
		arms = make([]load.Options, len(args))
		for i, spec := range args {
			o, err := armOptions(ctx, f.load, spec, s.err)
			if err != nil {
				return fmt.Errorf("arm %s (%q): %w", names[i], spec, err)
			}
			arms[i] = o
		}
	} else {
		if compare.IsTuneResult(args[0]) {
			return s.runCompareTunes(f, args)
		}
		for _, spec := range args {
			if strings.ContainsAny(spec, " \t") || strings.Contains(spec, "://") || strings.HasPrefix(spec, "unix:") {
				return exitcode.UsageErrorf("%q is not a saved result: to run targets, add --interleave", spec)
			}
			r, err := load.ReadResult(spec)
			if err != nil {
				return err
			}
			results = append(results, r)
		}
	}
	// The output only once the input is known to be good.
	release, err := cli.OpenOut(f.out)
	if err != nil {
		return err
	}
	defer release()
	run := &compare.Interleaved{}
	var runErr error
	if f.interleave {
		defer load.SetProcs(f.load.procs)()
		line := cli.NewStatusLine(s.err)
		run, runErr = compare.Interleave(ctx, arms, names, compare.InterleaveOptions{MaxRounds: f.rounds, MinEffect: f.minEffect / 100,
			Alpha: f.alpha, Race: true,
			Progress: func(p compare.Progress) {
				phase := "measuring"
				if p.Load.Warmup {
					phase = "warming up"
				}
				line.Set("compare: round %d (at most %d), arm %s %s %s  %d requests  %d errors", p.Pair, p.Pairs, p.Arm, phase,
					p.Load.Elapsed.Round(time.Second), p.Load.Requests, p.Load.Errors)
			}})
		line.Clear()
		if run == nil {
			return runErr
		}
		results = run.Results
	}
	rep, err := compare.ResultsWithin(results, names, f.minEffect/100, run.Share, f.alpha)
	if err != nil {
		return err
	}
	rep.Order, rep.Winner = run.Order, run.Winner
	rep.Notes = append(rep.Notes, run.Left...)
	if runErr != nil {
		rep.Partial = true
	}
	end := ending{out: s.out, dir: f.out, name: "compare.json", json: f.json, text: func(w io.Writer) { report.Compare(w, rep) }}
	if f.out != "" && f.interleave {
		// Each arm's own result too, which bench and compare read again.
		end.holds = "compare.json, " + strings.Join(names, ".json, ") + ".json"
		for i, r := range results {
			if err := report.SaveBench(filepath.Join(f.out, names[i]+".json"), r); err != nil {
				return err
			}
		}
	}
	if err := end.finish(rep); err != nil {
		return err
	}
	if runErr != nil {
		return runErr
	}
	if f.failIfWorse && rep.Worse() {
		return exitcode.ThresholdErrorf("--fail-if-worse: a metric is worse than the baseline")
	}
	return nil
}

// armOptions parses one arm: a target and its own flags, over the flags given to compare.
func armOptions(ctx context.Context, base benchFlags, spec string, stderr io.Writer) (load.Options, error) {
	words, err := compare.SplitWords(spec)
	if err != nil {
		return load.Options{}, exitcode.UsageErrorf("%v", err)
	}
	fs := pflag.NewFlagSet("arm", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var f benchFlags
	registerLoadFlags(fs, &f)
	registerRunFlags(fs, &f)
	f = base // registration set the defaults; the values given to compare come first
	if err := fs.Parse(words); err != nil {
		return load.Options{}, exitcode.UsageErrorf("%v", err)
	}
	if fs.NArg() != 1 {
		return load.Options{}, exitcode.UsageErrorf("want one target and its flags, got %d targets", fs.NArg())
	}
	f.durationSet = f.durationSet || fs.Changed("duration")
	return f.options(ctx, fs.Arg(0), stderr)
}

// runCompareTunes compares tune runs: knob by knob, and the recommendations' throughput.
func (s *streams) runCompareTunes(f compareFlags, args []string) error {
	names := compare.ArmNames(len(args))
	var results []*tune.Result
	for _, p := range args {
		r, err := compare.ReadTuneResult(p)
		if err != nil {
			return err
		}
		results = append(results, r)
	}
	rep, err := compare.Tunes(results, names, f.minEffect/100)
	if err != nil {
		return err
	}
	release, err := cli.OpenOut(f.out)
	if err != nil {
		return err
	}
	defer release()
	end := ending{out: s.out, dir: f.out, name: "compare.json", json: f.json, text: func(w io.Writer) { report.CompareTunes(w, rep) }}
	if err := end.finish(rep); err != nil {
		return err
	}
	if f.failIfWorse && rep.Throughput != nil && rep.Throughput.Worse() {
		return exitcode.ThresholdErrorf("--fail-if-worse: a recommendation's throughput is worse than the baseline's")
	}
	return nil
}
