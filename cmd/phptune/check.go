package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/phptune/phptune/internal/check"
	"github.com/phptune/phptune/internal/cli"
	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/report"
)

type checkFlags struct {
	statusPath       string
	prefix           string
	forDur, interval time.Duration
	json             bool
	out              string
	statusSet        bool // --fpm-status (or its old name --status-path) given
}

func newCheckCmd(s *streams, runF runFunc[checkFlags]) *cobra.Command {
	if runF == nil {
		runF = s.runCheck
	}
	var f checkFlags
	cmd := &cobra.Command{
		Use:   "check [TARGET...]",
		Short: "Read a live php-fpm pool, read-only, and say what is wrong with it, with the numbers",
		Long: `Reads running php-fpm pools for --for, read-only and sending no load, and says what is wrong with each, with the
numbers behind every finding: max_children reached and how long requests waited, every worker held, slow requests,
workers' memory and its growth per request, the memory the pool may take at max_children against what its
cgroup or the host has, opcache full or restarting. Each change it would make comes with its numbers and the
phptune tune command that would verify it.

TARGET is a pool file or php-fpm.conf (a relative include= taken from --prefix, else the prefix its place or
the master's binary suggests), a unix socket (PATH or unix:PATH), tcp:HOST:PORT or HOST:PORT (with
--fpm-status, else a running pool's own), or a running pool's name; without TARGET, every pool on this host.

The one thing it asks of a pool beyond its status page is to run phptune's opcache script, placed for that
request in a private directory (/run/phptune-check-GID, 0750 to the workers' group) and removed after.

Exit codes: 0 nothing found, 3 a problem found (a pool whose every worker is held included), 2 bad input (a
pool that cannot be read), 1 failure, 130 interrupted (what was sampled is reported, marked partial).`,
		Example: `  phptune check                                        # every pool on this host, 2 minutes
  phptune check /etc/php/8.2/fpm/pool.d/www.conf --for 10m
  phptune check /run/php/php8.2-fpm.sock --fpm-status /status
  phptune check tcp:127.0.0.1:9000 --json > check.json
  phptune check www --out /var/tmp/check               # result.json and report.html
  phptune check /srv/fpm/php-fpm.conf --prefix /srv/fpm  # its include=etc/php-fpm.d/*.conf, as php-fpm -p /srv/fpm`,
		Args: cli.Args(0, -1, "TARGET, a pool file, socket, tcp:HOST:PORT or running pool's name"),
		RunE: run(func(cmd *cobra.Command, args []string) error {
			f.statusSet = cmd.Flags().Changed("fpm-status") || cmd.Flags().Changed("status-path")
			return runF(cmd.Context(), f, args)
		}),
	}
	cli.LearnMore(cmd, `docs/check.md (each finding's rule, what check does to the pool)`)
	fl := cmd.Flags()
	fl.DurationVar(&f.forDur, "for", check.DefaultFor, "sample for this `DURATION`")
	fl.DurationVar(&f.interval, "interval", check.DefaultInterval, "`DURATION` between samples")
	// bench's name for the status page: one name across commands, the old one kept working.
	fl.StringVar(&f.statusPath, "fpm-status", "", "php-fpm's status page, the pm.status_path `PATH` of a socket or address "+
		"(default "+check.DefaultStatusPath+"; a pool file's is read from it)")
	cli.DeprecatedAlias(fl, "status-path", "fpm-status")
	fl.StringVar(&f.prefix, "prefix", "", "php-fpm's prefix `DIR` (its -p), for relative include= lines (default: guessed)")
	cli.FlagGroup(fl, "SAMPLING", "for", "interval", "fpm-status", "prefix")
	fl.BoolVar(&f.json, "json", false, "print the result as JSON (schema phptune/check/v1) instead of the summary")
	fl.StringVar(&f.out, "out", "", "also write result.json and report.html into this `DIR`")
	cli.FlagGroup(fl, "OUTPUT", "json", "out")
	return cmd
}

func (s *streams) runCheck(ctx context.Context, f checkFlags, args []string) error {
	if f.forDur <= 0 || f.interval <= 0 {
		return exitcode.UsageErrorf("--for and --interval must be positive")
	}
	if f.interval > f.forDur {
		return exitcode.UsageErrorf("--interval %s is longer than --for %s: give a window of several intervals", f.interval, f.forDur)
	}
	targets, skipped, err := check.Resolve(args, check.Given{StatusPath: f.statusPath, StatusSet: f.statusSet, Prefix: f.prefix})
	if err != nil {
		return err
	}
	if len(targets) == 0 {
		return nothingToSample(s.err, skipped)
	}
	if targets, err = check.Preflight(ctx, targets, f.prefix); err != nil {
		return err
	}
	release, err := cli.OpenOut(f.out)
	if err != nil {
		return err
	}
	defer release()
	line := cli.NewStatusLine(s.err)
	o := check.Options{Targets: targets, Skipped: skipped, For: f.forDur, Interval: f.interval}
	o.Progress = func(p check.Progress) {
		if !line.On() && !line.Lines() {
			// A log or CI: one line once sampling starts, saying what runs and for how long.
			line.Step("sampling", "check: sampling %d pool(s) for %s every %s", len(p.Pools), p.Total, f.interval)
			return
		}
		var pools []string
		for _, pp := range p.Pools {
			q := "?"
			if pp.Queue >= 0 {
				q = fmt.Sprint(pp.Queue)
			}
			pools = append(pools, fmt.Sprintf("%s: %d samples, busy %d, queue %s", pp.Name, pp.Samples, pp.Busy, q))
		}
		line.Set("check: %s/%s  %s", p.Elapsed.Round(time.Second), p.Total, strings.Join(pools, "; "))
	}
	res, runErr := check.Run(ctx, o)
	line.Clear()
	if res == nil {
		return runErr
	}
	res.CommandLine = s.argv
	holds := ""
	if f.out != "" {
		holds = "report.html, result.json"
	}
	end := ending{out: s.out, dir: f.out, json: f.json, holds: holds, text: func(w io.Writer) { report.Check(w, res) },
		page: func(w io.Writer) error { return report.CheckHTML(w, res) }}
	if err := end.finish(res); err != nil {
		return err
	}
	if runErr != nil {
		return runErr
	}
	if n := res.Problems(); n > 0 {
		return exitcode.ThresholdErrorf("%d problem(s) found (see above)", n)
	}
	if len(args) > 0 && len(skipped) > 0 {
		return exitcode.UsageErrorf("%d pool(s) named could not be sampled (see above)", len(skipped))
	}
	return nil
}

// nothingToSample is the error when no pool can be sampled: each skipped pool's reason on a line of its own
// before it.
func nothingToSample(stderr io.Writer, skipped []check.Skipped) error {
	if len(skipped) == 0 {
		return exitcode.UsageErrorf("no php-fpm pool is running here: give a pool file, a socket or tcp:HOST:PORT as TARGET")
	}
	if len(skipped) == 1 {
		s := skipped[0]
		return exitcode.UsageErrorf("pool %s cannot be sampled: %s: %s", s.Pool, s.Why, s.Fix)
	}
	for _, s := range skipped {
		fmt.Fprintf(stderr, "phptune check: pool %s: %s: %s\n", s.Pool, s.Why, s.Fix)
	}
	return exitcode.WithCode(exitcode.Usage, errQuiet)
}
