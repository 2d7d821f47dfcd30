package phpbuild

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"

	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/workload"
	"github.com/phptune/phptune/workloads"
)

// CheckAsked checks the variants (--variants), training mode (--train-mode) and rounds (--rounds) o asks for,
// and adds the baseline the variants are measured against when they are verified and it is not asked for.
func (o *Options) CheckAsked() error {
	for _, v := range o.Variants {
		if !slices.Contains(Variants(), v) {
			return exitcode.UsageErrorf("--variants %s: want baseline, pgo, pgo+lto or pgo+bolt", v)
		}
	}
	if !slices.Contains(o.Variants, Baseline) && o.Verify {
		o.Variants = append([]string{Baseline}, o.Variants...)
	}
	if o.TrainMode != "cgi" && o.TrainMode != "live" {
		return exitcode.UsageErrorf("--train-mode %s: want cgi or live", o.TrainMode)
	}
	if o.Rounds < 6 && o.Verify {
		return exitcode.UsageErrorf("--rounds %d: at least 6 rounds are needed for a verdict", o.Rounds)
	}
	return nil
}

// ForApp sets what o builds against: the app to train on, app (nil: the demo app) as named appArg, and the app
// whose requests are held out, holdoutApp (--holdout: a docroot, or demo; "": the defaults). o.Train and
// o.Holdout are the requests given (--url, --holdout-url): a plain docroot needs both, a prepared preset trains
// on its own URLs (each with its content check) and is held out against every demo route, the demo app on its
// pages and its API and form.
func (o *Options) ForApp(app *workload.App, appArg, holdoutApp string) error {
	given := len(o.Train) > 0
	switch {
	case app != nil && app.Workload == nil:
		// A plain docroot: the user says what to train on and what to hold out.
		st, err := os.Stat(filepath.Join(appArg, "index.php"))
		if err != nil || st.IsDir() {
			return exitcode.UsageErrorf("APP %s: want a docroot with index.php", appArg)
		}
		o.App, o.AppName = os.DirFS(appArg), appArg
		if !given {
			return exitcode.UsageErrorf("APP %s: say which requests to train on with --url (e.g. --url / --url /blog/)", appArg)
		}
		if len(o.Holdout) == 0 && holdoutApp == "" && o.Verify {
			return exitcode.UsageErrorf("APP %s: give held-out requests with --holdout-url (requests not trained on; with --holdout APP, that app's)", appArg)
		}
	case app != nil && app.Workload.Dir != "":
		// A prepared preset: trained in place on its URLs (each with its content check), its services running.
		w := app.Workload
		o.AppDir, o.AppFront, o.AppWritable = w.Docroot(), w.Manifest.Front, w.Manifest.Writable
		o.App, o.AppName = os.DirFS(o.AppDir), w.Preset.Name
		o.Markers = map[string]*regexp.Regexp{}
		for _, u := range app.URLs {
			o.Markers[u.URI] = u.ExpectBody
			if !given {
				o.Train = append(o.Train, u.URI)
			}
		}
		if len(o.Holdout) == 0 && holdoutApp == "" {
			// Held out: another preset, the demo app (every route).
			o.HoldoutApp = workloads.Demo()
			o.Holdout = DemoRoutes()
		}
	default:
		o.App, o.AppName = workloads.Demo(), "demo app"
		if len(o.Train) == 0 {
			o.Train = DemoTrain
		}
		if len(o.Holdout) == 0 && holdoutApp == "" {
			o.Holdout = DemoHoldout
		}
	}
	if holdoutApp == "demo" {
		o.HoldoutApp = workloads.Demo()
		if len(o.Holdout) == 0 {
			o.Holdout = DemoRoutes()
		}
	} else if holdoutApp != "" {
		if _, err := fs.Stat(os.DirFS(holdoutApp), "index.php"); err != nil {
			return exitcode.UsageErrorf("--holdout %s: want a docroot with index.php, or demo", holdoutApp)
		}
		o.HoldoutApp = os.DirFS(holdoutApp)
		if len(o.Holdout) == 0 && o.Verify {
			return exitcode.UsageErrorf("--holdout %s: give its requests with --holdout-url", holdoutApp)
		}
	}
	return nil
}
