package main

// tune --build: the faster PHP inside the tune, trained on the very mix being tuned.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/phpbuild"
	"github.com/phptune/phptune/internal/stack"
	"github.com/phptune/phptune/internal/textline"
	"github.com/phptune/phptune/internal/tune"
)

// buildVariants are the names tune --build takes: build's variants.
var buildVariants = []string{phpbuild.Baseline, phpbuild.PGO, phpbuild.PGOLTO, phpbuild.PGOBOLT}

// buildForTune builds, or takes from the cache, each of variants trained on the tune's own mix, with build's
// defaults otherwise (Debian's source, the app's extensions) and its smoke test, but without its verification:
// the tune's race of the knob php is the verification. Its log is build.log in out.
func buildForTune(ctx context.Context, args []string, o tune.Options, variants []string, out string, line *statusLine) ([]tune.Build, error) {
	f := buildDefaults()
	f.variants, f.noVerify, f.throughputTrial = variants, true, 0
	f.urls = trainingOf(o.URLs)
	bo, _, err := f.options(args)
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
	bo.OnStep, stop = stepLine(line, logf)
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

// trainingOf is the mix's URIs to train on, each once (php-cgi sends GETs: a form's POST trains as its page).
func trainingOf(mix []load.MixItem) []string {
	var uris []string
	for _, m := range mix {
		if !slices.Contains(uris, m.URI) {
			uris = append(uris, m.URI)
		}
	}
	return uris
}

// raceBuilds adds the builds to the knob php's values, after those it had (the installed php-fpm when it had
// none), and starts from the first.
func raceBuilds(o *tune.Options, builds []tune.Build) error {
	var bins []string
	at := slices.IndexFunc(o.Knobs, func(k knob.Knob) bool { return k.Name == "php" })
	if at >= 0 {
		bins = o.Knobs[at].Candidates(o.Base)
	}
	if len(bins) == 0 {
		installed, err := stack.FindPHPFPM(o.Stack.PHPFPM)
		if err != nil {
			return err
		}
		bins = []string{installed}
	}
	for _, b := range builds {
		if !slices.Contains(bins, b.PHPFPM) {
			bins = append(bins, b.PHPFPM)
		}
	}
	k := knob.Binary(bins)
	if at >= 0 {
		o.Knobs[at] = k
	} else {
		o.Knobs = append([]knob.Knob{k}, o.Knobs...)
	}
	o.Base.PHPFPM = bins[0]
	return nil
}
