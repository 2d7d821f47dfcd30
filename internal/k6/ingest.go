package k6

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/load"
)

// Ingest reads the raw outputs of a k6 test's instances (k6 --out json, plain or gzip, k6's log lines among them
// allowed) into one result: counts summed, latency from one merged histogram, the window the longest instance's.
// The points of phptune's scripts count in their measured phase; other scripts' those of scenario ("" for every
// scenario). o gives the accepted statuses and the result's target and timeout.
func Ingest(paths []string, o *load.Options, scenario string) (*load.Result, []Output, error) {
	if len(paths) == 0 {
		return nil, nil, exitcode.UsageErrorf("give the k6 outputs to read (k6 run --out json=FILE, one per instance)")
	}
	t0 := time.Now()
	var recs []*load.Recorder
	outs := make([]Output, len(paths))
	window := time.Duration(0)
	for i, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, nil, exitcode.UsageErrorf("ingest: %v", err)
		}
		rec := load.NewRecorder(o, t0)
		outs[i].Name = p
		rd := reader{rec: rec, scenario: scenario, out: &outs[i]}
		err = rd.Read(f)
		f.Close()
		if err != nil {
			return nil, nil, exitcode.UsageErrorf("ingest: %v", err)
		}
		if outs[i].Requests == 0 {
			return nil, nil, exitcode.UsageErrorf("ingest %s: no request points%s: give the output of k6 run --out json=FILE", p, scenariosSeen(outs[i], scenario))
		}
		window = max(window, outs[i].Window())
		recs = append(recs, rec)
	}
	res := recs[0].Result(max(window, time.Millisecond), 0, recs[1:]...)
	res.Connections = 0
	for i, out := range outs {
		res.Connections += out.MaxVUs
		if out.Other > 0 {
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s: %d lines that are not k6 points (its log) skipped", paths[i], out.Other))
		}
	}
	start := outs[0].First
	for _, out := range outs {
		if out.First.Before(start) {
			start = out.First
		}
	}
	res.Started = start
	return res, outs, nil
}

func scenariosSeen(out Output, scenario string) string {
	if out.Phased || scenario == "" || len(out.Scenarios) == 0 {
		return ""
	}
	var seen []string
	for s := range out.Scenarios {
		seen = append(seen, s)
	}
	return fmt.Sprintf(" in scenario %q (seen: %s)", scenario, strings.Join(seen, ", "))
}
