package report

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/phptune/phptune/internal/check"
	"github.com/phptune/phptune/internal/compare"
	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/phpbuild"
	"github.com/phptune/phptune/internal/textline"
	"github.com/phptune/phptune/internal/tune"
)

// Saved renders a saved result as its HTML page, whichever command wrote it (its schema says which): data is the
// file at path, beside which a tune run's configuration files are read (TuneFiles).
func Saved(w io.Writer, path string, data []byte) error {
	var head struct {
		Schema string `json:"schema"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return exitcode.UsageErrorf("%s: not a phptune result (%v): give a result.json written by phptune tune, bench or build", path, textline.First(err.Error()))
	}
	switch head.Schema {
	case tune.Schema:
		var r tune.Result
		if err := json.Unmarshal(data, &r); err != nil {
			return exitcode.UsageErrorf("%s: bad %s result: %v", path, tune.Schema, textline.First(err.Error()))
		}
		if err := TuneHTML(w, &r, TuneFiles(filepath.Dir(path), &r)); err != nil {
			return err
		}
	case load.SchemaBench:
		r, err := load.ReadResult(path)
		if err != nil {
			return err
		}
		if err := BenchHTML(w, r); err != nil {
			return err
		}
	case compare.Schema:
		var r compare.Report
		if err := json.Unmarshal(data, &r); err != nil || len(r.Arms) == 0 {
			return exitcode.UsageErrorf("%s: bad %s result: %v", path, compare.Schema, errOr(err, "no arms"))
		}
		if err := CompareHTML(w, &r); err != nil {
			return err
		}
	case compare.SchemaTune:
		var r compare.TuneReport
		if err := json.Unmarshal(data, &r); err != nil || len(r.Runs) == 0 {
			return exitcode.UsageErrorf("%s: bad %s result: %v", path, compare.SchemaTune, errOr(err, "no runs"))
		}
		if err := CompareTunesHTML(w, &r); err != nil {
			return err
		}
	case check.Schema:
		var r check.Result
		if err := json.Unmarshal(data, &r); err != nil {
			return exitcode.UsageErrorf("%s: bad %s result: %v", path, check.Schema, textline.First(err.Error()))
		}
		if err := CheckHTML(w, &r); err != nil {
			return err
		}
	case phpbuild.Schema:
		var r phpbuild.Result
		if err := json.Unmarshal(data, &r); err != nil {
			return exitcode.UsageErrorf("%s: bad %s result: %v", path, phpbuild.Schema, textline.First(err.Error()))
		}
		if err := BuildHTML(w, &r); err != nil {
			return err
		}
	default:
		return exitcode.UsageErrorf("%s: schema %q is not one phptune report renders (%s, %s, %s, %s, %s, %s)", path, head.Schema,
			tune.Schema, load.SchemaBench, compare.Schema, compare.SchemaTune, phpbuild.Schema, check.Schema)
	}
	return nil
}

// TuneFiles are the run's configuration files by name with their contents: read from dir (where tune writes
// them, beside result.json) or from the path the result recorded; a value that is already the text is kept.
func TuneFiles(dir string, r *tune.Result) map[string]string {
	files := map[string]string{}
	for name, v := range r.Files {
		if strings.Contains(v, "\n") {
			files[name] = v
			continue
		}
		for _, p := range []string{filepath.Join(dir, filepath.Base(name)), v} {
			if b, err := os.ReadFile(p); err == nil {
				files[name] = string(b)
				break
			}
		}
	}
	return files
}

func errOr(err error, msg string) string {
	if err != nil {
		return textline.First(err.Error())
	}
	return msg
}
