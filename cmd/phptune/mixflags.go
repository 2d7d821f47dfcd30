package main

import (
	"context"
	"fmt"
	"io"
	"regexp"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/phptune/phptune/internal/accesslog"
	"github.com/phptune/phptune/internal/cli"
	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/urlfile"
)

// mixFlags are the ways to give the URL mix, the same in every command that loads an app: --url, a URL file
// (requests as users send them, a login) and access logs (the traffic people really have).
type mixFlags struct {
	urls, accessLogs                        []string
	urlFile, logFormat, logKeep, logExclude string
	logTop                                  int
	// read keeps the last mix read from logs, shared by the copies of these flags (compare's arms): the same
	// logs are read and summarised once.
	read *logMemo
}

// logMemo is a mix read from access logs, and the flags it was read with.
type logMemo struct {
	key string
	mix *accesslog.Mix
}

// expectBody compiles --expect-body's REGEX: nil when not given, a usage error when it does not compile.
func expectBody(pattern string) (*regexp.Regexp, error) {
	if pattern == "" {
		return nil, nil
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, exitcode.UsageErrorf("--expect-body: %v", err)
	}
	return re, nil
}

func (m *mixFlags) register(fl *pflag.FlagSet, urlHelp string) {
	if urlHelp != "" {
		fl.StringArrayVar(&m.urls, "url", nil, urlHelp)
	}
	fl.StringVar(&m.urlFile, "url-file", "", "the URLs from a YAML or JSON `FILE`: per URL method, headers, cookies, body or form, weight, expect; a login "+
		"sent once before the run (docs/urls.md)")
	m.registerLog(fl)
}

// registerLog registers the access log's flags alone (build trains on GET paths, and takes no URL file).
func (m *mixFlags) registerLog(fl *pflag.FlagSet) {
	m.read = &logMemo{}
	fl.StringArrayVar(&m.accessLogs, "from-access-log", nil, "the mix from an access log `FILE`, nginx or Apache, plain or gzip (repeatable: its rotated files): the "+
		"most requested routes and, with request times logged, the most time-consuming")
	fl.StringVar(&m.logFormat, "log-format", "", "the access log's `FORMAT` as nginx log_format or Apache LogFormat (default: combined or common, detected)")
	fl.IntVar(&m.logTop, "log-top", 10, "at most this many routes from the access log (by requests; the three costliest in time are added)")
	fl.StringVar(&m.logExclude, "log-exclude", "", "leave out the access log's requests whose URI matches this `REGEX` (an admin area, a private API)")
	fl.StringVar(&m.logKeep, "log-keep", "", "keep what the access log's mix leaves out, a `LIST` of: static, health, methods (non-GET), errors (not 2xx or 304)")
}

// trainingURIs are the access logs' URIs for training (accesslog.Mix.Training).
func (m *mixFlags) trainingURIs(report io.Writer) ([]string, error) {
	if len(m.accessLogs) == 0 {
		return nil, m.checkLogFlags()
	}
	mix, err := m.readLogs(report)
	if err != nil {
		return nil, err
	}
	return mix.Training(), nil
}

// checkLogFlags refuses --log-* options without an access log: they would be ignored.
func (m *mixFlags) checkLogFlags() error {
	if len(m.accessLogs) == 0 && (m.logFormat != "" || m.logKeep != "" || m.logExclude != "" || m.logTop != 10) {
		return exitcode.UsageErrorf("--log-format, --log-keep, --log-exclude and --log-top shape --from-access-log: give the log")
	}
	return nil
}

// logLoad is the load of the access logs read, nil when none was.
func (m *mixFlags) logLoad() *accesslog.Load {
	if m.read == nil || m.read.mix == nil || len(m.accessLogs) == 0 {
		return nil
	}
	return m.read.mix.Load
}

// given says whether any URL was given.
func (m *mixFlags) given() bool {
	return len(m.urls) > 0 || m.urlFile != "" || len(m.accessLogs) > 0
}

// loginFunc logs in on the served app (base: http://HOST:PORT) and returns the mix with the session's cookies.
type loginFunc func(ctx context.Context, base string) ([]load.MixItem, error)

// build is the mix: --url entries, then the URL file's, then the access logs' (whose choice is printed to
// report), each response checked against check unless its URL has its own marker. login is nil when nothing must
// log in.
func (m *mixFlags) build(base load.Request, check *regexp.Regexp, report io.Writer) ([]load.MixItem, loginFunc, error) {
	if err := m.checkLogFlags(); err != nil {
		return nil, nil, err
	}
	items, err := load.ParseURLs(m.urls, check)
	if err != nil {
		return nil, nil, err
	}
	var file *urlfile.Mix
	if m.urlFile != "" {
		f, err := urlfile.Load(m.urlFile)
		if err != nil {
			return nil, nil, exitcode.UsageErrorf("--url-file: %v", err)
		}
		if file, err = f.Mix(base, check); err != nil {
			return nil, nil, exitcode.UsageErrorf("--url-file: %v", err)
		}
	}
	var logged []load.MixItem
	if len(m.accessLogs) > 0 {
		mix, err := m.readLogs(report)
		if err != nil {
			return nil, nil, err
		}
		logged = mix.Items(base, check)
	}
	if file == nil {
		return append(items, logged...), nil, nil
	}
	return append(append(items, file.Items...), logged...), file.SessionAmid(items, logged), nil
}

// readLogs reads the access logs and prints the mix they give (once for the same flags).
func (m *mixFlags) readLogs(report io.Writer) (*accesslog.Mix, error) {
	keep, err := accesslog.ParseKeep(m.logKeep)
	if err != nil {
		return nil, exitcode.UsageErrorf("--log-keep: %v", err)
	}
	if m.logTop < 1 {
		return nil, exitcode.UsageErrorf("--log-top must be at least 1")
	}
	var exclude *regexp.Regexp
	if m.logExclude != "" {
		if exclude, err = regexp.Compile(m.logExclude); err != nil {
			return nil, exitcode.UsageErrorf("--log-exclude: %v", err)
		}
	}
	key := fmt.Sprintf("%q %q %d %q %q", m.accessLogs, m.logFormat, m.logTop, m.logKeep, m.logExclude)
	if m.read == nil {
		m.read = &logMemo{}
	}
	mix := m.read.mix
	if mix == nil || m.read.key != key {
		if mix, err = accesslog.Read(m.accessLogs, accesslog.Options{Format: m.logFormat, Top: m.logTop, Keep: keep, Exclude: exclude}); err != nil {
			return nil, exitcode.UsageErrorf("--from-access-log: %v", err)
		}
		mix.Summary(report)
		m.read.key, m.read.mix = key, mix
	}
	return mix, nil
}

// mixCmdFlags are mix's flags.
type mixCmdFlags struct {
	mix     mixFlags
	method  string
	headers []string
}

func newMixCmd(s *streams, runF runFunc[mixCmdFlags]) *cobra.Command {
	if runF == nil {
		runF = s.runMix
	}
	var f mixCmdFlags
	cmd := &cobra.Command{
		Use:   "mix",
		Short: "Print the URL mix that tune, profile and bench would send, without sending anything",
		Long: `Prints the URL mix the other commands build from the same flags: --url, --url-file (without its login, which
needs the served app) and --from-access-log (its summary first, on stderr). One line per URL: weight, method,
path, the content marker.`,
		Example: `  phptune mix --from-access-log /var/log/nginx/access.log --log-top 5
  phptune mix --url-file urls.yaml`,
		Args: cli.Args(0, 0, ""),
		RunE: run(func(cmd *cobra.Command, args []string) error { return runF(cmd.Context(), f, args) }),
	}
	fl := cmd.Flags()
	f.mix.register(fl, "a URL path, `PATH[=WEIGHT]` (repeatable)")
	fl.StringVarP(&f.method, "method", "m", "GET", "request `METHOD` of the URLs that do not give their own")
	fl.StringArrayVarP(&f.headers, "header", "H", nil, "request header `\"NAME: VALUE\"` (repeatable)")
	cli.LearnMore(cmd, `docs/urls.md (URL files; access logs: formats, time stamps, filters, the load they show)`)
	return cmd
}

func (s *streams) runMix(_ context.Context, f mixCmdFlags, _ []string) error {
	base, err := load.ParseRequest(f.method, f.headers, "", true)
	if err != nil {
		return err
	}
	if !f.mix.given() {
		return exitcode.UsageErrorf("give --url, --url-file or --from-access-log")
	}
	items, _, err := f.mix.build(base, nil, s.err)
	if err != nil {
		return err
	}
	for _, it := range items {
		marker := ""
		if it.ExpectBody != nil {
			marker = "  expect " + it.ExpectBody.String()
		}
		fmt.Fprintf(s.out, "%6d  %-6s %s%s\n", it.Weight, it.RequestOver(base).Method, it.URI, marker)
	}
	return nil
}
