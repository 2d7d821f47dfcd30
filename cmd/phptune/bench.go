package main

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/phptune/phptune/internal/cli"
	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/measure"
	"github.com/phptune/phptune/internal/report"
)

type benchFlags struct {
	connections                 int
	requests                    int64
	duration, warmup, timeout   time.Duration
	method, bodyFile            string
	headers                     []string
	noKeepalive                 bool
	expectStatus, expectBody    string
	requestURI, docRoot, status string
	json                        bool
	out                         string
	procs                       int
	rate                        float64
	maxInflight, repeat         int
	mix                         mixFlags
	engine                      engineFlags
	durationSet                 bool // -d given: not beside -n
}

func newBenchCmd(s *streams, runF runFunc[benchFlags]) *cobra.Command {
	if runF == nil {
		runF = s.runBench
	}
	var f benchFlags
	cmd := &cobra.Command{
		Use:   "bench TARGET",
		Short: "Drive load at an HTTP server or straight at php-fpm over FastCGI",
		Example: `  phptune bench http://127.0.0.1:8080/ -c 32 -d 30s
  phptune bench fcgi://127.0.0.1:9000/var/www/index.php -c 4 --fpm-status /status
  phptune bench unix:/run/php/php8.2-fpm.sock:/var/www/index.php --request-uri /articles/3 -n 10000
  phptune bench http://127.0.0.1:8080/ --rate 500 --repeat 5        # open model, 5 trials
  phptune bench http://127.0.0.1:8080/api/orders -m POST --body order.json -H 'Content-Type: application/json'
  phptune bench http://staging:8080/ --engine k6 --k6-instances 2 --k6-host load1 --k6-host load2 -c 100 -d 1m`,
		Long: `Sends requests to TARGET over -c connections, each sending its next request when the last is answered (closed
model), or on a schedule with --rate (open model, latency counted from each request's due time), and reports
requests/s, latency percentiles from HDR histograms, errors by class and the generator's own CPU per request.

TARGET
  http://HOST:PORT/PATH?QUERY                     HTTP/1.1 (keep-alive unless --no-keepalive)
  fcgi://HOST:PORT/ABS/PATH/script.php?QUERY      FastCGI over TCP, straight to php-fpm
  unix:/PATH/TO.sock:/ABS/PATH/script.php?QUERY   FastCGI over a unix socket
The script path is SCRIPT_FILENAME as php-fpm sees it; the CGI params are those nginx sends. php-fpm never
multiplexes: connections above pm.max_children wait for a worker.`,
		Args: cli.Args(1, 1, "TARGET, the address to load: http://HOST:PORT/PATH, fcgi://HOST:PORT/SCRIPT or unix:/SOCKET:/SCRIPT"),
		RunE: run(func(cmd *cobra.Command, args []string) error {
			f.durationSet = cmd.Flags().Changed("duration")
			return runF(cmd.Context(), f, args)
		}),
	}
	cli.LearnMore(cmd, `docs/bench.md (error classes, the open model, latency of every request); docs/k6.md (--engine k6)`)
	fl := cmd.Flags()
	registerLoadFlags(fl, &f)
	fl.IntVar(&f.repeat, "repeat", 1, "run this many trials, each with its own warm-up: figures per trial and merged")
	cli.FlagGroup(fl, "LOAD", "repeat")
	registerRunFlags(fl, &f)
	fl.StringVar(&f.status, "fpm-status", "", "read php-fpm's status page before and after: its `PATH` (FastCGI targets), "+
		"or fcgi://HOST:PORT/PATH, unix:/SOCK:/PATH")
	cli.FlagGroup(fl, "FASTCGI", "fpm-status")
	fl.BoolVar(&f.json, "json", false, "print the result as JSON (schema phptune/bench/v1) instead of the summary")
	fl.StringVar(&f.out, "out", "", "also write result.json into this `DIR`")
	cli.FlagGroup(fl, "OUTPUT", "json", "out")
	return cmd
}

// registerLoadFlags registers the flags that shape the load: bench's, compare's arms' and export k6's.
func registerLoadFlags(fl *pflag.FlagSet, f *benchFlags) {
	fl.IntVarP(&f.connections, "connections", "c", 4, "concurrent connections")
	fl.Int64VarP(&f.requests, "requests", "n", 0, "measured requests in all (instead of -d)")
	fl.DurationVarP(&f.duration, "duration", "d", 10*time.Second, "measured window")
	fl.DurationVar(&f.warmup, "warmup", time.Second, "warm-up before the measured window, excluded from the results")
	fl.Float64Var(&f.rate, "rate", 0, "open model: send this many requests/s in all, on a schedule; latency counts from each request's due time")
	fl.DurationVar(&f.timeout, "timeout", load.DefaultTimeout, timeoutUsage)
	cli.FlagGroup(fl, "LOAD", "connections", "requests", "duration", "warmup", "rate", "timeout")
	f.mix.register(fl, "a URL path on the target, `PATH[=WEIGHT]` (repeatable: a weighted mix instead of the target's own path)")
	fl.StringVarP(&f.method, "method", "m", "GET", "request `METHOD`")
	fl.StringArrayVarP(&f.headers, "header", "H", nil, "request header `\"NAME: VALUE\"` (repeatable)")
	fl.StringVar(&f.bodyFile, "body", "", "request body from this `FILE`")
	fl.BoolVar(&f.noKeepalive, "no-keepalive", false, "HTTP: a new connection for every request")
	fl.StringVar(&f.expectStatus, "expect-status", "", "accepted `STATUSES`, e.g. 200 or 200,301-302 (default: 1xx-3xx)")
	fl.StringVar(&f.expectBody, "expect-body", "", "a `REGEX` every response body must match")
	cli.FlagGroup(fl, "WHAT TO SEND", "url", "url-file", "from-access-log", "log-format", "log-top", "log-exclude", "log-keep",
		"method", "header", "body", "no-keepalive", "expect-status", "expect-body")
}

// registerRunFlags registers the flags of a load run here (bench and compare's arms; not export k6, which writes
// the test for k6 to run elsewhere): FastCGI's params, the bounded pool, the generator.
func registerRunFlags(fl *pflag.FlagSet, f *benchFlags) {
	fl.IntVar(&f.maxInflight, "max-inflight", 0, "with --rate: one schedule shared by this many connections, a bounded pool "+
		"(FastCGI: default the static pool's max_children when --fpm-status tells it)")
	cli.FlagGroup(fl, "LOAD", "max-inflight")
	fl.StringVar(&f.requestURI, "request-uri", "", "FastCGI: the `URI` to send as REQUEST_URI (front controllers route on it; "+
		"default: the script path)")
	fl.StringVar(&f.docRoot, "document-root", "", "FastCGI: `DIR` as DOCUMENT_ROOT (default: the script's directory)")
	cli.FlagGroup(fl, "FASTCGI", "request-uri", "document-root")
	fl.IntVar(&f.procs, "gomaxprocs", 0, "Go processors for the generator (default: 1 on machines with 2 or fewer CPUs, "+
		"so the server keeps a core; within a CPU quota, its CPUs)")
	cli.DeprecatedAlias(fl, "procs", "gomaxprocs")
	f.engine.register(fl)
	cli.FlagGroup(fl, "GENERATOR", "gomaxprocs", "engine", "k6", "k6-instances", "k6-host", "k6-ssh", "k6-remote")
}

// options turns the load flags into the generator's options.
func (f *benchFlags) options(ctx context.Context, rawTarget string, stderr io.Writer) (load.Options, error) {
	t, err := load.ParseTarget(rawTarget)
	if err != nil {
		return load.Options{}, err
	}
	o := load.Options{Target: t, Connections: f.connections, Warmup: f.warmup, Timeout: f.timeout, Rate: f.rate, MaxInflight: f.maxInflight}
	if f.requests > 0 {
		if f.durationSet {
			return o, exitcode.UsageErrorf("give -n or -d, not both")
		}
		o.Requests = f.requests
	} else if f.requests < 0 {
		return o, exitcode.UsageErrorf("-n %d: want a positive count", f.requests)
	} else {
		if f.duration <= 0 {
			return o, exitcode.UsageErrorf("-d %s: want a positive duration", f.duration)
		}
		o.Duration = f.duration
	}
	if f.warmup < 0 || f.timeout <= 0 {
		return o, exitcode.UsageErrorf("--warmup must not be negative and --timeout must be positive")
	}
	if o.Request, err = load.ParseRequest(f.method, f.headers, f.bodyFile, !f.noKeepalive); err != nil {
		return o, err
	}
	if f.expectStatus != "" {
		if o.ExpectStatus, err = load.ParseStatuses(f.expectStatus); err != nil {
			return o, err
		}
	}
	if o.ExpectBody, err = expectBody(f.expectBody); err != nil {
		return o, err
	}
	if o.Mix, err = f.mixOf(ctx, o, stderr); err != nil {
		return o, err
	}
	if t.Protocol == load.FastCGI {
		o.Target.RequestURI, o.Target.DocumentRoot = f.requestURI, f.docRoot
	} else if f.requestURI != "" || f.docRoot != "" {
		return o, exitcode.UsageErrorf("--request-uri and --document-root apply to FastCGI targets only")
	}
	o.Engine, err = f.engine.engineOf(o)
	return o, err
}

// mixOf is the URL mix of --url-file and --from-access-log on o's target (nil: the target's own path), logged in
// when the URL file says so.
func (f *benchFlags) mixOf(ctx context.Context, o load.Options, stderr io.Writer) ([]load.MixItem, error) {
	if !f.mix.given() {
		return nil, nil
	}
	items, login, err := f.mix.build(o.Request, o.ExpectBody, stderr)
	if err != nil || login == nil {
		return items, err
	}
	if o.Target.Protocol != load.HTTP {
		return nil, exitcode.UsageErrorf("--url-file: a login is sent over HTTP, and %s is FastCGI: give the session cookie in the file's cookies", o.Target.Raw)
	}
	return login(ctx, "http://"+o.Target.Address)
}

func (s *streams) runBench(ctx context.Context, f benchFlags, args []string) error {
	o, err := f.options(ctx, args[0], s.err)
	if err != nil {
		return err
	}
	if f.repeat < 1 {
		return exitcode.UsageErrorf("--repeat %d: want at least 1", f.repeat)
	}
	// The status page, when asked for: where to read it.
	var st *load.StatusSource
	if f.status != "" {
		if st, err = load.ParseStatusSource(f.status, o.Target); err != nil {
			return err
		}
	}
	release, err := cli.OpenOut(f.out)
	if err != nil {
		return err
	}
	defer release()
	defer load.SetProcs(f.procs)()
	var before *measure.FPMStatus
	if st != nil {
		if before, err = st.Before(ctx, &o); err != nil {
			return err
		}
	}

	line := cli.NewStatusLine(s.err)
	o.Progress = func(p load.Progress) { line.Set("bench: %s", p.Line()) }
	res, runErr := load.RunTrials(ctx, o, f.repeat)
	line.Clear()
	if res == nil {
		return runErr
	}
	if st != nil && ctx.Err() == nil {
		st.After(ctx, res, before, o)
	}
	if res.Requests > 0 && res.Errors == res.Requests && runErr == nil {
		runErr = exitcode.WithCode(exitcode.Failed, errors.New("every request failed"))
	}
	if err := res.Encode(); err != nil {
		return err
	}
	end := ending{out: s.out, dir: f.out, json: f.json, text: func(w io.Writer) { report.Bench(w, res) }}
	if err := end.finish(res); err != nil {
		return err
	}
	return runErr
}
