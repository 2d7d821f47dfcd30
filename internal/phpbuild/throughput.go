package phpbuild

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/compare"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/stack"
	"github.com/phptune/phptune/internal/stats"
)

// FPMArm is a php-fpm binary under comparison.
type FPMArm struct {
	Name    string
	FPM     string // "" = the installed php-fpm
	Opcache string
	INI     []string // settings on top, for the master too (opcache.huge_code_pages)
}

// ThroughputResult is one variant's requests/s against the baseline's through php-fpm.
type ThroughputResult struct {
	BaselineRPS float64    `json:"baseline_rps"`
	RPS         float64    `json:"rps"`
	GainPct     float64    `json:"gain_pct"`
	GainCIPct   [2]float64 `json:"gain_ci_pct"`
	Verdict     string     `json:"verdict"`
	Trials      int        `json:"trials"`
}

// Throughput serves the app with each arm's php-fpm (one worker, FastCGI over a unix socket, no nginx), and
// drives the URLs at them from one connection in interleaved rounds (internal/compare, on the experiment engine):
// requests/s per arm, each decided against the first arm, in at most rounds rounds, on share of the build's
// error budget (stats.DefaultAlpha).
func Throughput(ctx context.Context, arms []FPMArm, app stack.Config, urls []string, rounds int, trial time.Duration, share float64) (map[string]ThroughputResult, error) {
	var opts []load.Options
	var names []string
	var mix []load.MixItem
	for _, u := range urls {
		mix = append(mix, load.MixItem{URI: u, Weight: 1})
	}
	for _, a := range arms {
		cfg := app
		cfg.PHPFPM, cfg.NoNginx = a.FPM, true
		cfg.Pools = []stack.Pool{{Name: "tp", Listen: stack.ListenUnix, PM: "static", MaxChildren: 1}}
		cfg.Defines = FPMDefines(a.Opcache)
		for _, kv := range a.INI {
			k, v, _ := strings.Cut(kv, "=")
			cfg.Defines[k] = v
		}
		s, err := stack.Start(ctx, cfg)
		if err != nil {
			return nil, fmt.Errorf("%s: php-fpm: %w", a.Name, err)
		}
		defer s.Stop(context.Background())
		ep, _ := s.Pool("tp")
		t, err := load.ParseTarget(ep.URL(s.Script()))
		if err != nil {
			return nil, err
		}
		opts = append(opts, load.Options{Target: t, Request: load.Request{Method: "GET"}, Connections: 1, Duration: trial,
			Warmup: trial / 3, Timeout: 10 * time.Second, Mix: mix})
		names = append(names, a.Name)
	}
	run, err := compare.Interleave(ctx, opts, names, compare.InterleaveOptions{MaxRounds: rounds, MinEffect: 0.01, Share: share})
	if run == nil || len(run.Results) == 0 {
		return nil, err
	}
	rep, cerr := compare.ResultsWithin(run.Results, names, 0.01, run.Share, stats.DefaultAlpha)
	if cerr != nil {
		return nil, cerr
	}
	out := map[string]ThroughputResult{}
	for _, a := range rep.Arms[1:] {
		for _, row := range a.Rows {
			if row.Metric != "rps" {
				continue
			}
			r := ThroughputResult{BaselineRPS: row.Baseline, RPS: row.Value, GainPct: row.Diff * 100, Verdict: string(row.Verdict), Trials: a.Trials}
			if row.Stats != nil {
				r.GainPct = row.Stats.Estimate * 100
				r.GainCIPct = [2]float64{row.Stats.Lo * 100, row.Stats.Hi * 100}
			}
			out[a.Name] = r
		}
	}
	return out, err
}
