// Command engine shows the experiment engine's error rates and power by simulation on replayed real noise:
// rounds of real interleaved trials from tune result.json files, each arm's mean taken out, replayed around
// planted effects. It prints, for pairwise comparisons and for whole simulated tune runs of the demo app, the
// figures the engine is held to (false verdicts, power, rounds for a large effect, interval coverage).
// bench/engine.sh runs it; -extract writes the noise files the unit tests replay.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"math"
	"math/rand"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/experiment"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/stats"
	"github.com/phptune/phptune/internal/tune"
)

// The noise files replayed: goodput (dynamic pools, or any pool in older recordings), goodput on static pools
// (steady twins), CPU.
var (
	staticKey = tune.NoiseKey(tune.MetricGoodput, "static")
	noiseKeys = []string{tune.MetricGoodput, staticKey, tune.MetricCPU}
)

func main() {
	extract := flag.String("extract", "", "write the noise of the result files to DIR/noise-METRIC.json and stop")
	noiseDir := flag.String("noise", "internal/experiment/testdata", "directory of noise-METRIC.json files to replay")
	runs := flag.Int("runs", 2000, "simulated experiments or tune runs per figure")
	budget := flag.Duration("budget", 10*time.Minute, "budget of the simulated tune runs")
	flag.Parse()
	if *extract != "" {
		if err := extractNoise(*extract, flag.Args()); err != nil {
			fmt.Fprintln(os.Stderr, "engine:", err)
			os.Exit(1)
		}
		return
	}
	noise := map[string]experiment.Noise{}
	for _, m := range noiseKeys {
		path := fmt.Sprintf("%s/noise-%s.json", *noiseDir, m)
		n, err := experiment.LoadNoise(path)
		if errors.Is(err, fs.ErrNotExist) && m == staticKey {
			continue // older recordings: static pools' goodput replays goodput's noise
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "engine:", err)
			os.Exit(1)
		}
		noise[m] = n
		fmt.Printf("noise %-14s %5d rounds from %s; sd of a log ratio %.3f\n", m, len(n.Rounds), n.Source, n.SD())
	}
	pairwise(noise, *runs)
	tuneRuns(noise, *runs, *budget)
	tuneRuns(noise, *runs, 3*time.Minute)
}

// extractNoise reads tune result files and writes their rounds as noise, by metric.
func extractNoise(dir string, files []string) error {
	byMetric := map[string][]experiment.Recorded{}
	var sources []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		var r tune.Result
		if err := json.Unmarshal(data, &r); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		sources = append(sources, f)
		for _, t := range r.Trials {
			if !strings.HasPrefix(t.Phase, "knob ") && t.Phase != "final" {
				continue
			}
			m, v := t.Metric, t.Value
			if m == "" {
				m, v = tune.MetricGoodput, t.RPS
			}
			pm, _, _ := strings.Cut(strings.TrimPrefix(t.Config, "pm="), " ")
			m = tune.NoiseKey(m, pm)
			byMetric[m] = append(byMetric[m], experiment.Recorded{Group: f + " " + t.Phase, Arm: t.Config, Value: v})
		}
	}
	for m, recs := range byMetric {
		n := experiment.NoiseFrom(strings.Join(sources, ", "), m, recs)
		data, _ := json.Marshal(n)
		path := fmt.Sprintf("%s/noise-%s.json", dir, m)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return err
		}
		fmt.Printf("%s: %d rounds, sd of a log ratio %.3f\n", path, len(n.Rounds), n.SD())
	}
	return nil
}

// pairwise: two-arm races at a typical share of a tune run's error budget.
func pairwise(noise map[string]experiment.Noise, runs int) {
	const alpha, minEffect = 0.05 / 20, tune.DefaultMinEffect
	fmt.Printf("\nPairwise races, alpha %.4f a comparison, minimum effect %.0f%%, at most 200 rounds:\n", alpha, 100*minEffect)
	fmt.Printf("  %-14s %8s %12s %12s %12s %10s %10s\n", "metric", "effect", "better", "worse", "no_diff", "rounds", "coverage")
	for _, m := range noiseKeys {
		if _, ok := noise[m]; !ok {
			continue
		}
		for _, eff := range []float64{0, 0.05, 0.10, 0.40, -0.40} {
			rng := rand.New(rand.NewSource(1))
			var better, worse, nodiff, covered int
			var rounds []float64
			for i := 0; i < runs; i++ {
				rep := experiment.NewReplay(noise[m], rng)
				a, b := rep.Arm("a", 0), rep.Arm("b", math.Log1p(eff))
				out, _ := experiment.Run(context.Background(), experiment.Spec{Arms: []experiment.Arm{a, b}, Mode: experiment.Race,
					HigherIsBetter: true, MinEffect: minEffect, Alpha: alpha, MaxRounds: 200})
				c := out.Arms[1].Vs
				switch c.Verdict {
				case stats.Better:
					better++
				case stats.Worse:
					worse++
				case stats.NoDifference:
					nodiff++
				}
				if c.LogLo <= math.Log1p(eff) && math.Log1p(eff) <= c.LogHi {
					covered++
				}
				rounds = append(rounds, float64(out.Rounds))
			}
			sort.Float64s(rounds)
			fmt.Printf("  %-14s %+7.0f%% %11.1f%% %11.1f%% %11.1f%% %10.0f %9.1f%%\n", m, 100*eff, pct(better, runs), pct(worse, runs),
				pct(nodiff, runs), rounds[len(rounds)/2], pct(covered, runs))
		}
	}
}

// tuneRuns: simulated tune runs of the demo app with its measured effects planted (opcache off -44%, JIT
// tracing +20% and function +10%) and one knob with a planted 5% gain (keepalive on), the rest none.
func tuneRuns(noise map[string]experiment.Noise, runs int, budget time.Duration) {
	var falseRuns, jit, opcache, five, coverMiss, coverAll, nullRaced, nullDecided int
	var opRounds []float64
	var elapsed float64
	for i := 0; i < runs; i++ {
		rng := rand.New(rand.NewSource(int64(i)))
		so := tune.SimOptions{Knobs: knob.All("preload.php", nil), Base: knob.Debian(), Budget: budget,
			Effect: tune.Planted(map[string]map[string]float64{
				"opcache":   {"off": math.Log(0.56)},
				"jit":       {"tracing": math.Log(1.2), "function": math.Log(1.1)},
				"keepalive": {"on": math.Log(1.05)},
			}),
			Noise:     replays(noise, rng),
			TrialCost: map[string]time.Duration{tune.MetricGoodput: 400 * time.Millisecond, tune.MetricCPU: 400 * time.Millisecond},
			StartCost: 4 * time.Second, TwinStartCost: time.Second, MinEffect: tune.DefaultMinEffect, Alpha: 0.05, Conc: 4, Pool: 4,
			Facts: knob.Facts{THP: "madvise", MaxResponse: 16 << 10, Concurrency: 4, RealpathLimit: 4 << 20, RealpathUsed: 4 << 10}}
		res, err := tune.Simulate(context.Background(), so)
		if err != nil {
			fmt.Fprintln(os.Stderr, "engine:", err)
			os.Exit(1)
		}
		elapsed += res.ElapsedS
		bad := false
		for _, k := range res.Knobs {
			switch k.Name {
			case "opcache":
				if k.Value == "on" && k.Verdict == stats.Worse {
					opcache++
					opRounds = append(opRounds, float64(k.Rounds))
				}
			case "jit":
				if k.Value == "tracing" && k.Verdict == stats.Better {
					jit++
				}
			case "keepalive":
				if k.Value == "on" && k.Verdict == stats.Better {
					five++
				}
			default:
				if k.Verdict == stats.Better || k.Verdict == stats.Worse {
					bad = true
				}
				if k.Rounds > 0 {
					nullRaced++
					if k.Verdict == stats.NoDifference {
						nullDecided++
					}
				}
			}
		}
		for _, c := range res.Comparisons {
			if c.Stats.N < 2 {
				continue
			}
			truth := so.Effect(mustConfig(res, c), c.Metric) - so.Effect(mustBase(res, c), c.Metric)
			coverAll++
			if truth < c.Stats.LogLo || truth > c.Stats.LogHi {
				coverMiss++
			}
		}
		if bad {
			falseRuns++
		}
	}
	sort.Float64s(opRounds)
	med := 0.0
	if len(opRounds) > 0 {
		med = opRounds[len(opRounds)/2]
	}
	fmt.Printf("\nSimulated tune runs of the demo, %s budget, %d runs (mean %.0f s used):\n", budget, runs, elapsed/float64(runs))
	fmt.Printf("  runs with a false better/worse on a knob without effect: %5.1f%%   (target at most 5%%)\n", pct(falseRuns, runs))
	fmt.Printf("  5%% effect (keepalive) found better:                     %5.1f%%   (target at least 90%% at the default budget)\n", pct(five, runs))
	fmt.Printf("  JIT (+20%%) found better:                                %5.1f%%\n", pct(jit, runs))
	fmt.Printf("  opcache off (-44%%) found worse:                         %5.1f%%, in %.0f rounds (median; target at most 4)\n", pct(opcache, runs), med)
	fmt.Printf("  knobs without effect shown no_difference:               %5.1f%% of %d raced\n", pct(nullDecided, nullRaced), nullRaced)
	fmt.Printf("  intervals covering the planted effect:                  %5.1f%% of %d   (target at least 93%%)\n", 100-pct(coverMiss, coverAll), coverAll)
}

// replays replays every noise recorded, by key.
func replays(noise map[string]experiment.Noise, rng *rand.Rand) map[string]*experiment.Replay {
	out := map[string]*experiment.Replay{}
	for k, n := range noise {
		out[k] = experiment.NewReplay(n, rng)
	}
	return out
}

// mustConfig and mustBase rebuild a comparison's two configurations from the run (the simulation knows effects
// by configuration).
func mustConfig(res *tune.Result, c tune.Comparison) knob.Config {
	return configOf(res, c.Knob, c.B, c.Config)
}

func mustBase(res *tune.Result, c tune.Comparison) knob.Config {
	return configOf(res, c.Knob, c.A, c.Config)
}

func configOf(res *tune.Result, name, value, candidate string) knob.Config {
	cfg := res.Baseline.Clone()
	for _, r := range res.Comparisons {
		if r.Config == candidate {
			break
		}
		if r.Accepted {
			k, _ := knob.ByName(r.Knob)
			k.Set(&cfg, r.B)
		}
	}
	k, ok := knob.ByName(name)
	if ok {
		k.Set(&cfg, value)
	}
	return cfg
}

func pct(n, of int) float64 { return 100 * float64(n) / float64(max(of, 1)) }
