package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/phptune/phptune/internal/compare"
	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/report"
	"github.com/phptune/phptune/internal/stats"
)

type compareFlags struct {
	load        benchFlags
	interleave  bool
	repeat      int
	minEffect   float64
	failIfWorse bool
	json        bool
	out         string
}

func newCompareCmd() *cobra.Command {
	var f compareFlags
	cmd := &cobra.Command{
		Use:   "compare RESULT.json RESULT.json... | compare --interleave 'TARGET [FLAGS]' 'TARGET [FLAGS]'...",
		Short: "Put results side by side and say, metric by metric, better, worse or no difference",
		Long: `Compare results against the first one (the baseline): throughput and latency percentiles side by side with the
change in %. When the results carry repeated trials, each metric gets a verdict: better or worse (the interval
excludes zero and the change is at least --min-effect), no_difference (the interval lies within +-min-effect) or
inconclusive (with the rounds that would decide it), with the estimated change and its confidence interval.
Trials of one interleaved run pair by round and are judged by the experiment engine's rule (anytime-valid
confidence sequences on the per-round log ratios, one 5% error budget over every arm and metric); independent
runs by Mann-Whitney with Holm's correction.

Tune results (schema phptune/tune/v1) are compared knob by knob: each run's value and verdict, and whether the
runs agree; then the recommendations' throughput, from each run's final trials of its recommendation
(independent samples, Mann-Whitney).

With --interleave, the arguments are arms to run: a bench TARGET, optionally followed by bench flags for that
arm only (quote each arm). Flags given to compare itself apply to every arm. The arms run in rounds, one trial
of each (with its own warm-up) in balanced orders, so that drift on the machine falls on all alike, at most
--repeat rounds. Two arms: the second runs against the first until its req/s comparison is decided. More than
two race: an arm shown slower than another leaves, the run ends when one is left (the first keeps its place
unless another is shown faster), and the report names the pick and why each other arm left.`,
		Example: `  phptune bench http://127.0.0.1:8080/ --repeat 10 --out a; phptune bench http://127.0.0.1:8081/ --repeat 10 --out b
  phptune compare a/result.json b/result.json
  phptune compare tune-a/result.json tune-b/result.json    # two tune runs: knob by knob, and their recommendations
  phptune compare --interleave 'http://127.0.0.1:8080/' 'http://127.0.0.1:8081/' -c 8 -d 2s
  phptune compare --interleave 'unix:/tmp/a.sock:/srv/index.php' 'fcgi://127.0.0.1:9000/srv/index.php' --fail-if-worse`,
		Args: cobra.MinimumNArgs(2),
		RunE: run(func(cmd *cobra.Command, args []string) error {
			return runCompare(cmd.Context(), cmd.Flags(), f, args)
		}),
	}
	fl := cmd.Flags()
	registerLoadFlags(fl, &f.load)
	fl.BoolVar(&f.interleave, "interleave", false, "run the arms given as arguments in interleaved trials, then compare")
	fl.IntVar(&f.repeat, "repeat", 20, "with --interleave: the most rounds (one trial of each arm a round); the run stops as soon as every arm is decided")
	fl.Float64Var(&f.minEffect, "min-effect", 100*stats.DefaultMinEffect, "smallest change in % that counts as better or worse")
	fl.BoolVar(&f.failIfWorse, "fail-if-worse", false, "exit 3 when any metric of any arm is worse than the baseline")
	fl.BoolVar(&f.json, "json", false, "print the comparison as JSON (schema phptune/compare/v1)")
	fl.StringVar(&f.out, "out", "", "write compare.json (and with --interleave each arm's result) into this directory")
	return cmd
}

func armNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		if i < 26 {
			names[i] = string(rune('A' + i))
		} else {
			names[i] = fmt.Sprintf("arm%d", i+1)
		}
	}
	return names
}

func runCompare(ctx context.Context, common *pflag.FlagSet, f compareFlags, args []string) error {
	if f.minEffect < 0 {
		return exitcode.UsageErrorf("--min-effect %v: want a percentage of 0 or more", f.minEffect)
	}
	if f.out != "" {
		release, err := openOut(f.out)
		if err != nil {
			return err
		}
		defer release()
	}
	names := armNames(len(args))
	var results []*load.Result
	run := &compare.Interleaved{}
	var runErr error
	if f.interleave {
		arms := make([]load.Options, len(args))
		for i, spec := range args {
			o, err := armOptions(ctx, common, f.load, spec)
			if err != nil {
				return fmt.Errorf("arm %s (%q): %w", names[i], spec, err)
			}
			arms[i] = o
		}
		defer setProcs(f.load.procs)()
		line := newStatusLine(os.Stderr)
		run, runErr = compare.Interleave(ctx, arms, names, compare.InterleaveOptions{MaxRounds: f.repeat, MinEffect: f.minEffect / 100, Race: true,
			Progress: func(p compare.Progress) {
				phase := "measuring"
				if p.Load.Warmup {
					phase = "warming up"
				}
				line.set("compare: round %d (at most %d), arm %s %s %s  %d requests  %d errors", p.Pair, p.Pairs, p.Arm, phase,
					p.Load.Elapsed.Round(time.Second), p.Load.Requests, p.Load.Errors)
			}})
		line.clear()
		if run == nil {
			return runErr
		}
		results = run.Results
	} else {
		if isTuneResult(args[0]) {
			return runCompareTunes(f, args)
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
	rep, err := compare.ResultsWithin(results, names, f.minEffect/100, run.Share, stats.DefaultAlpha)
	if err != nil {
		return err
	}
	rep.Order, rep.Winner = run.Order, run.Winner
	rep.Notes = append(rep.Notes, run.Left...)
	if runErr != nil {
		rep.Partial = true
	}
	end := ending{dir: f.out, name: "compare.json", json: f.json, text: func(w io.Writer) { report.Compare(w, rep) }}
	if f.out != "" && f.interleave {
		// Each arm's own result too, which bench and compare read again.
		end.holds = "compare.json, " + strings.Join(names, ".json, ") + ".json"
		for i, r := range results {
			if err := saveResult(filepath.Join(f.out, names[i]+".json"), r); err != nil {
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
func armOptions(ctx context.Context, common *pflag.FlagSet, base benchFlags, spec string) (load.Options, error) {
	words, err := splitWords(spec)
	if err != nil {
		return load.Options{}, exitcode.UsageErrorf("%v", err)
	}
	fs := pflag.NewFlagSet("arm", pflag.ContinueOnError)
	fs.SetOutput(discard{})
	var f benchFlags
	registerLoadFlags(fs, &f)
	f = base // registration set the defaults; the values given to compare come first
	if err := fs.Parse(words); err != nil {
		return load.Options{}, exitcode.UsageErrorf("%v", err)
	}
	if fs.NArg() != 1 {
		return load.Options{}, exitcode.UsageErrorf("want one target and its flags, got %d targets", fs.NArg())
	}
	return f.options(ctx, fs.Arg(0), fs.Changed("duration") || common.Changed("duration"))
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

func saveResult(path string, r *load.Result) error {
	if err := r.Encode(); err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := report.WriteJSON(&buf, r); err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	return writeAtomic(path, buf.Bytes())
}

// splitWords splits a string as a POSIX shell would into words: whitespace separates, single quotes keep
// everything, double quotes keep all but backslash escapes of " and \, a backslash escapes outside quotes.
func splitWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unterminated ' in %q", s)
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\') {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, fmt.Errorf("unterminated \" in %q", s)
			}
			inWord = true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inWord = true
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
