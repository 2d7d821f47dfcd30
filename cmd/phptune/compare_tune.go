package main

import (
	"encoding/json"
	"io"
	"os"

	"github.com/phptune/phptune/internal/compare"
	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/report"
	"github.com/phptune/phptune/internal/tune"
)

// isTuneResult says whether path holds a tune result (schema phptune/tune/v1); anything unreadable is left to
// the bench reader and its errors.
func isTuneResult(path string) bool {
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	var head struct {
		Schema string `json:"schema"`
	}
	return json.Unmarshal(data, &head) == nil && head.Schema == tune.Schema
}

func readTuneResult(path string) (*tune.Result, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, exitcode.UsageErrorf("read result: %v", err)
	}
	var r tune.Result
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, exitcode.UsageErrorf("%s: not a phptune result: %v", path, oneLine(err))
	}
	if r.Schema != tune.Schema {
		return nil, exitcode.UsageErrorf("%s: schema %q: tune results are compared only with tune results (%s)", path, r.Schema, tune.Schema)
	}
	return &r, nil
}

// runCompareTunes compares tune runs: knob by knob, and the recommendations' throughput.
func runCompareTunes(f compareFlags, args []string) error {
	names := armNames(len(args))
	var results []*tune.Result
	for _, p := range args {
		r, err := readTuneResult(p)
		if err != nil {
			return err
		}
		results = append(results, r)
	}
	rep, err := compare.Tunes(results, names, f.minEffect/100)
	if err != nil {
		return err
	}
	if f.out != "" {
		release, err := openOut(f.out)
		if err != nil {
			return err
		}
		defer release()
	}
	end := ending{dir: f.out, name: "compare.json", json: f.json, text: func(w io.Writer) { report.CompareTunes(w, rep) }}
	if err := end.finish(rep); err != nil {
		return err
	}
	if f.failIfWorse && rep.Throughput != nil && rep.Throughput.Worse() {
		return exitcode.ThresholdErrorf("--fail-if-worse: a recommendation's throughput is worse than the baseline's")
	}
	return nil
}
