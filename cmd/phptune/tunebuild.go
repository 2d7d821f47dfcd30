package main

// tune --build: the faster PHP inside the tune, trained on the very mix being tuned.

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/phptune/phptune/internal/cli"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/phpbuild"
	"github.com/phptune/phptune/internal/tune"
)

// buildForTune builds, or takes from the cache, each of variants trained on the tune's own mix, with build's
// defaults otherwise (Debian's source, the app's extensions) and its smoke test, but without its verification:
// the tune's race of the knob php is the verification. Its log is build.log in out.
func buildForTune(ctx context.Context, args []string, o tune.Options, variants []string, out string, line *cli.StatusLine, stderr io.Writer) ([]tune.Build, error) {
	f := buildDefaults()
	f.variants, f.noVerify, f.throughputTrial = variants, true, 0
	f.urls = load.URIs(o.URLs) // php-cgi sends GETs: a form's POST trains as its page
	bo, _, err := f.options(args, stderr)
	if err != nil {
		return nil, fmt.Errorf("tune --build: %w", err)
	}
	logf, err := os.Create(filepath.Join(out, "build.log"))
	if err != nil {
		return nil, fmt.Errorf("tune --build: %w", err)
	}
	defer logf.Close()
	bo.Log = logf
	var stop func()
	bo.OnStep, stop = cli.Steps(line, logf, "build")
	start := time.Now()
	res, err := phpbuild.Run(ctx, bo)
	stop()
	if err != nil {
		return nil, fmt.Errorf("tune --build: %w (log %s)", err, logf.Name())
	}
	return res.TuneBuilds(variants, time.Since(start).Seconds(), logf.Name())
}
