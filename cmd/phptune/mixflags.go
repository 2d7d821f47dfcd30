package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/phptune/phptune/internal/accesslog"
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

// trainingURIs are the access logs' URIs for training, each repeated in proportion to its weight (1 to 10
// times: a profile is shaped by what runs most).
func (m *mixFlags) trainingURIs(report io.Writer) ([]string, error) {
	if len(m.accessLogs) == 0 {
		return nil, m.checkLogFlags()
	}
	items, err := m.fromLogs(load.Request{Method: "GET"}, nil, report)
	if err != nil {
		return nil, err
	}
	top := 1
	for _, it := range items {
		top = max(top, it.Weight)
	}
	var uris []string
	for _, it := range items {
		for range max(1, (10*it.Weight+top/2)/top) {
			uris = append(uris, it.URI)
		}
	}
	return uris, nil
}

// checkLogFlags refuses --log-* options without an access log: they would be ignored.
func (m *mixFlags) checkLogFlags() error {
	if len(m.accessLogs) == 0 && (m.logFormat != "" || m.logKeep != "" || m.logExclude != "" || m.logTop != 10) {
		return exitcode.UsageErrorf("--log-format, --log-keep, --log-exclude and --log-top shape --from-access-log: give the log")
	}
	return nil
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
	items, err := parseURLs(m.urls, check)
	if err != nil {
		return nil, nil, err
	}
	var login loginFunc
	if m.urlFile != "" {
		f, err := urlfile.Load(m.urlFile)
		if err != nil {
			return nil, nil, exitcode.UsageErrorf("--url-file: %v", err)
		}
		fm, err := f.Mix(base, check)
		if err != nil {
			return nil, nil, exitcode.UsageErrorf("--url-file: %v", err)
		}
		before := slices.Clone(items)
		items = append(items, fm.Items...)
		if in := sessionOf(fm); in != nil {
			login = func(ctx context.Context, url string) ([]load.MixItem, error) {
				logged, err := in(ctx, url)
				if err != nil {
					return nil, err
				}
				// items, by then, ends with the access logs' URLs, which are sent as logged (no cookies).
				return append(append(slices.Clone(before), logged...), items[len(before)+len(logged):]...), nil
			}
		}
	}
	if len(m.accessLogs) > 0 {
		logged, err := m.fromLogs(base, check, report)
		if err != nil {
			return nil, nil, err
		}
		items = append(items, logged...)
	}
	return items, login, nil
}

// sessionOf is fm's login as tune sends it (nil without one): a failed login is the user's to fix (exit 2), an
// interrupted one is not.
func sessionOf(fm *urlfile.Mix) loginFunc {
	if !fm.HasLogin() {
		return nil
	}
	return func(ctx context.Context, url string) ([]load.MixItem, error) {
		in, err := fm.LogIn(ctx, url)
		if err != nil && ctx.Err() == nil {
			return nil, exitcode.WithCode(exitcode.Usage, err)
		} else if err != nil {
			return nil, ctx.Err()
		}
		return in, nil
	}
}

// fromLogs reads the access logs and prints the mix they give.
func (m *mixFlags) fromLogs(base load.Request, check *regexp.Regexp, report io.Writer) ([]load.MixItem, error) {
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
	var items []load.MixItem
	for _, r := range mix.Routes {
		for _, ex := range r.Examples {
			it := load.MixItem{URI: ex.URI, Weight: ex.Weight, ExpectBody: check, Optional: true}
			if r.Method != base.Method {
				rq := base
				rq.Method = r.Method
				it.Request = &rq
			}
			items = append(items, it)
		}
	}
	return items, nil
}

func newMixCmd() *cobra.Command {
	var m mixFlags
	var method string
	var headers []string
	cmd := &cobra.Command{
		Use:   "mix",
		Short: "Print the URL mix that tune, profile and bench would send, without sending anything",
		Long: `Prints the URL mix the other commands build from the same flags: --url, --url-file (without its login, which
needs the served app) and --from-access-log (its summary first, on stderr). One line per URL: weight, method,
path, the content marker.`,
		Example: `  phptune mix --from-access-log /var/log/nginx/access.log --log-top 5
  phptune mix --url-file urls.yaml`,
		Args: args(0, 0, ""),
		RunE: run(func(cmd *cobra.Command, args []string) error {
			base, err := parseRequest(method, headers, "", true)
			if err != nil {
				return err
			}
			if !m.given() {
				return exitcode.UsageErrorf("give --url, --url-file or --from-access-log")
			}
			items, _, err := m.build(base, nil, os.Stderr)
			if err != nil {
				return err
			}
			for _, it := range items {
				marker := ""
				if it.ExpectBody != nil {
					marker = "  expect " + it.ExpectBody.String()
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%6d  %-6s %s%s\n", it.Weight, it.RequestOver(base).Method, it.URI, marker)
			}
			return nil
		}),
	}
	fl := cmd.Flags()
	m.register(fl, "a URL path, `PATH[=WEIGHT]` (repeatable)")
	fl.StringVarP(&method, "method", "m", "GET", "request `METHOD` of the URLs that do not give their own")
	fl.StringArrayVarP(&headers, "header", "H", nil, "request header `\"NAME: VALUE\"` (repeatable)")
	learnMore(cmd, `docs/urls.md (URL files; access logs: formats, time stamps, filters, the load they show)`)
	return cmd
}
