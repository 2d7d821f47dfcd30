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
	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/phpbuild"
	"github.com/phptune/phptune/internal/textline"
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
	var builds []tune.Build
	for _, name := range variants {
		v := res.Variant(name)
		if v == nil || !v.Available || v.PHPFPM == "" {
			why := "not built"
			if v != nil && v.Reason != "" {
				why = textline.First(v.Reason)
			}
			return nil, exitcode.WithCode(exitcode.Failed, fmt.Errorf("tune --build %s: %s (log %s)", name, why, logf.Name()))
		}
		builds = append(builds, tune.Build{Variant: name, PHPFPM: v.PHPFPM, Cached: v.Cached, Seconds: time.Since(start).Seconds()})
	}
	return builds, nil
}

// raceBuilds adds the builds to the knob php's values (knob.WithBinaries).
func raceBuilds(o *tune.Options, builds []tune.Build) (err error) {
	var bins []string
	for _, b := range builds {
		bins = append(bins, b.PHPFPM)
	}
	o.Knobs, err = knob.WithBinaries(o.Knobs, &o.Base, o.Stack.PHPFPM, bins)
	return err
}
