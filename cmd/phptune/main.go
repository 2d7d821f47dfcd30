// Command phptune measures a PHP stack (nginx + php-fpm) and says what to change, with evidence.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/phptune/phptune/internal/cli"
	"github.com/phptune/phptune/internal/exitcode"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	// SIGHUP too: a closed terminal or a dropped ssh session must stop the servers and keep the results, like Ctrl-C.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	// A developer's aid: PHPTUNE_CPUPROFILE=FILE writes a Go CPU profile of the whole command.
	if path := os.Getenv("PHPTUNE_CPUPROFILE"); path != "" {
		if f, err := os.Create(path); err == nil {
			if pprof.StartCPUProfile(f) == nil {
				defer f.Close()
				defer pprof.StopCPUProfile()
			}
		}
	}
	err := newRoot(&streams{out: os.Stdout, err: os.Stderr, argv: os.Args}).ExecuteContext(ctx)
	stop()
	code := exitCode(err)
	if err != nil && !errors.Is(err, errQuiet) {
		msg := err.Error()
		if code == exitcode.Interrupted {
			msg = "interrupted"
		}
		fmt.Fprintf(os.Stderr, "phptune: %s\n", cli.UnknownCommand(msg))
	}
	if code != 0 {
		pprof.StopCPUProfile()
		os.Exit(code)
	}
}

// streams are where a command writes, and the command line its result records: the process's own in main,
// buffers in tests.
type streams struct {
	out, err io.Writer
	argv     []string
}

// runFunc runs a command on its parsed flags and positional arguments: the command's own run, or a test's that
// stops there (gh's NewCmdX(f, runF)).
type runFunc[F any] func(ctx context.Context, f F, args []string) error

// errQuiet marks an error already reported to the user; only its exit code matters.
var errQuiet = errors.New("reported")

// runError marks errors returned by a command's own code; anything else came from cobra's parsing (bad usage).
type runError struct{ err error }

func (e runError) Error() string { return e.err.Error() }
func (e runError) Unwrap() error { return e.err }

func exitCode(err error) int {
	if err == nil {
		return exitcode.OK
	}
	var re runError
	if !errors.As(err, &re) {
		return exitcode.Usage
	}
	return exitcode.Of(re.err)
}

// run adapts a command body so that its errors are told apart from cobra's usage errors.
func run(f func(cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if err := f(cmd, args); err != nil {
			return runError{err}
		}
		return nil
	}
}

func newRoot(s *streams) *cobra.Command {
	root := &cobra.Command{
		Use:   "phptune",
		Short: "Measure a PHP stack (nginx + php-fpm) and say what to change, with evidence",
		Example: `  phptune tune                                  # the bundled demo app: pool size and knobs, 10 minutes
  phptune tune ./myapp --url / --url /blog/=3   # your docroot and its URL mix
  phptune serve ./myapp                         # nginx + php-fpm for it until Ctrl-C, with bench commands
  phptune bench http://127.0.0.1:8080/ -c 32 -d 30s
  phptune profile --compare opcache=off         # why a configuration is fast or slow, per request`,
		Long: `phptune serves a PHP application for real (nginx + php-fpm in a private run directory, never the system's
configuration), drives load at it over HTTP or straight to php-fpm over FastCGI, and says what to change.

EXIT CODES
0 ok; 1 the run failed; 2 bad usage, bad input or a missing prerequisite (what to install is named); 3 a threshold
you set was not met (gate: NEW is worse); 4 gate could not decide in its budget; 130 interrupted by Ctrl-C,
SIGTERM or SIGHUP (the results so far kept, marked partial).`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version,
	}
	cli.LearnMore(root, `README.md and docs/ (in the source; /usr/share/doc/phptune with the Debian package)`)
	root.SetFlagErrorFunc(cli.FlagError)
	root.SetHelpFunc(func(c *cobra.Command, _ []string) { cli.RenderHelp(c.OutOrStdout(), c) })
	root.SetOut(s.out)
	root.SetErr(s.err)
	root.AddCommand(newServeCmd(s, nil), newBenchCmd(s, nil), newCheckCmd(s, nil), newMixCmd(s, nil), newCompareCmd(s, nil),
		newTuneCmd(s, nil), newGateCmd(s, nil), newReportCmd(s, nil), newProfileCmd(s, nil), newClientsCmd(s, nil), newWorkloadCmd(s),
		newBuildCmd(s, nil), newExportCmd(s), newIngestCmd(s), newManCmd())
	builtinsHelp(root)
	// Flags are listed as registered: by group, the most used first. What parsing them says (an old name's
	// notice, cli.DeprecatedAlias) goes to stderr: cobra would print it to the command's out, stdout, where it
	// would end up in --json's output.
	var keepOrder func(c *cobra.Command)
	keepOrder = func(c *cobra.Command) {
		c.Flags().SortFlags = false
		c.Flags().SetOutput(s.err)
		for _, sub := range c.Commands() {
			keepOrder(sub)
		}
	}
	keepOrder(root)
	return root
}
