package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/cli"
	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/stack"
	"github.com/phptune/phptune/internal/tune"
	"github.com/phptune/phptune/internal/workload"
	"github.com/spf13/cobra"
)

type serveFlags struct {
	phpFPM, nginx, front, out, user, pm, envFile, recommendation string
	port, maxChildren                                            int
	forDur                                                       time.Duration
	json                                                         bool
}

func newServeCmd(s *streams, runF runFunc[serveFlags]) *cobra.Command {
	if runF == nil {
		runF = s.runServe
	}
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve [APP|PRESET]",
		Short: "Serve a PHP app with nginx + php-fpm in a private run directory until Ctrl-C",
		Long: `Serves APP (a docroot with a front controller, a prepared workload preset by name with its own services, or the
bundled demo app when omitted) with nginx and two php-fpm pools of Debian's default settings, one on a unix
socket behind nginx and one on TCP, on loopback, from configs in a private run directory, and prints the
commands to bench each. With --recommendation it serves a tune run's recommendation instead, in its runtime
(nginx or Apache in front of php-fpm, or Apache's prefork with mod_php), to compare with another server by
compare --interleave. Ctrl-C or --for stops every process it started. It never changes system configuration.`,
		Example: `  phptune serve                                 # the bundled demo app
  phptune serve dokuwiki                        # a prepared preset, its services too
  phptune serve ./myapp --port 8080 --out ./run # keep its configs and logs in ./run
  phptune serve --for 1m --json                 # the endpoints for a script
  phptune serve ./myapp --recommendation phptune-results/tune-20260101-120000/result.json`,
		Args: cli.Args(0, 1, "APP, a docroot or a preset's name"),
		RunE: run(func(cmd *cobra.Command, args []string) error { return runF(cmd.Context(), f, args) }),
	}
	cli.LearnMore(cmd, `docs/serve.md; README.md "What phptune promises" (who can reach what)`)
	fl := cmd.Flags()
	fl.StringVar(&f.front, "front", "", "front controller `PATH`, relative to the docroot (default index.php, or the preset's)")
	fl.StringVar(&f.pm, "pm", "dynamic", "process manager of the pools: static, dynamic or ondemand")
	fl.IntVar(&f.maxChildren, "max-children", 5, "pm.max_children of each pool")
	fl.StringVar(&f.recommendation, "recommendation", "", "serve the recommendation of a tune run, from its `RESULT.json` "+
		"(its runtime, pool and settings), instead of Debian's pools")
	fl.IntVar(&f.port, "port", 0, "HTTP port on 127.0.0.1 (default: a free one)")
	fl.DurationVar(&f.forDur, "for", 0, "stop after this long (default: until Ctrl-C)")
	fl.StringVar(&f.phpFPM, "php-fpm", "", "php-fpm `BINARY` (default: the newest php-fpm8.x)")
	fl.StringVar(&f.nginx, "nginx", "", "nginx `BINARY` (default: /usr/sbin/nginx)")
	fl.StringVar(&f.user, "user", "", "`USER` for the workers when run as root (default www-data)")
	fl.StringVar(&f.out, "out", "", "keep configs and logs in this run `DIR` (default: a temporary one, removed at the end)")
	fl.BoolVar(&f.json, "json", false, "print the endpoints as JSON (schema phptune/serve/v1) once ready")
	fl.StringVar(&f.envFile, "env-file", "", "write the endpoints as shell variables to this `FILE` once ready (removed at the end)")
	return cmd
}

func (s *streams) runServe(ctx context.Context, f serveFlags, args []string) error {
	app, err := workload.Resolve(args)
	if err != nil {
		return err
	}
	cfg, name := app.Stack, app.Name
	if f.forDur < 0 {
		return exitcode.UsageErrorf("--for %s: want a positive duration", f.forDur)
	}
	cfg.PHPFPM, cfg.Nginx, cfg.RunDir, cfg.User, cfg.HTTPPort = f.phpFPM, f.nginx, f.out, f.user, f.port
	if f.front != "" {
		cfg.Front = f.front
	}
	if f.recommendation != "" {
		rec, err := tune.ReadRecommendation(f.recommendation)
		if err != nil {
			return err
		}
		rec.Apply(&cfg, "tuned") // its runtime, pool, ini settings and master's settings (nginx's keep-alive and buffers too)
	} else {
		cfg.Pools = stack.ServePools(f.pm, f.maxChildren)
	}
	// The app's own services (a preset's database) first, stopped last on every path.
	svc, err := app.StartServices(ctx)
	defer svc.Stop(context.Background())
	if err != nil {
		return err
	}
	st, err := stack.Start(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Stop(context.Background())

	if f.envFile != "" {
		if err := st.WriteEnv(f.envFile); err != nil {
			return err
		}
		defer os.Remove(f.envFile)
	}
	if f.json {
		serveJSON(s.out, st, app, name, svc.Names)
	} else {
		servePrint(s.out, st, app, name, svc.Names, f.forDur)
	}
	var timeout <-chan time.Time
	if f.forDur > 0 {
		timeout = time.After(f.forDur)
	}
	var runErr error
	select {
	case <-ctx.Done():
		runErr = ctx.Err()
	case <-timeout:
	case <-st.Exited():
		// Which one and why; its logs are named only when the run dir is kept (--out).
		runErr = st.Died()
	case <-svc.Exited():
		runErr = fmt.Errorf("a service of the app exited unexpectedly: %s", strings.Join(svc.Names, ", "))
	}
	if err := st.Stop(context.Background()); err != nil {
		return err
	}
	if !f.json {
		fmt.Fprintln(s.out, "Stopped.")
	}
	return runErr
}

// fcgiTarget adds the URL's query string to a FastCGI target (its QUERY_STRING).
func fcgiTarget(target, path string) string {
	if _, q, ok := strings.Cut(path, "?"); ok {
		return target + "?" + q
	}
	return target
}

// serveURLs lists the app's URLs with their markers for --json.
func serveURLs(app *workload.App) []map[string]any {
	var out []map[string]any
	for _, u := range app.URLs {
		m := map[string]any{"path": u.URI, "weight": u.Weight}
		if u.ExpectBody != nil {
			m["expect_body"] = u.ExpectBody.String()
		}
		out = append(out, m)
	}
	return out
}
