package phpbuild

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/phptune/phptune/internal/measure"
	"github.com/phptune/phptune/internal/stats"
)

// Sets a variant is verified on.
const (
	SetTrain   = "train"
	SetHoldout = "holdout"
	SetGuard   = "guard"
)

// SetNames in report order.
var SetNames = []string{SetTrain, SetHoldout, SetGuard}

// Arm is a PHP binary under comparison.
type Arm struct {
	Name    string
	CGI     string
	Opcache string   // absolute path of opcache.so for -d zend_extension; "" when the binary's own ini loads it
	OwnINI  bool     // run with the binary's own php.ini (Debian's, which loads its extensions) instead of -n
	INI     []string // more -d settings
	Guard   string   // bench.php from this arm's source
}

// VerifyConfig says what to measure.
type VerifyConfig struct {
	App        App
	HoldoutApp App      // the held-out set's app; zero = App
	Train      []string // request URIs
	Holdout    []string
	Guard      string // bench.php; "" = each arm's own (the baseline's is used for all when they share a source)
	Rounds     int    // interleaved rounds; default stats.DefaultPairs
	Warmup     int    // untimed repeats per run; default 5
	Repeats    int    // timed repeats per URL per run; default 30
	GuardN     int    // timed repeats of bench.php per run; default 1
	CPU        int    // CPU to pin to; default the last one
	JIT        bool
	Callgrind  bool // also count instructions per request with valgrind
	// OnRound is told each round's start (progress).
	OnRound func(round, rounds int)
}

// SetResult is one arm on one set.
type SetResult struct {
	TimesUS []float64 `json:"times_us"` // mean time per request in each round, microseconds
	Median  float64   `json:"median_us"`
	IPR     float64   `json:"instructions_per_req,omitempty"`
}

// ArmResult is one arm's measurements.
type ArmResult struct {
	Name string                `json:"name"`
	Sets map[string]*SetResult `json:"sets"`
	// Comparisons against the baseline (the first arm), per set.
	Cmp map[string]*stats.Comparison `json:"comparisons,omitempty"`
}

// Verify measures every arm against the first (the baseline): per round and set, each arm runs each request with
// php-cgi -T warmup,repeats pinned to one CPU, in an order that alternates between rounds. Rounds finished
// before a cancellation are kept (the error is then ctx's).
func Verify(ctx context.Context, arms []Arm, cfg VerifyConfig, log io.Writer) ([]*ArmResult, int, error) {
	if len(arms) < 2 {
		return nil, 0, errors.New("verify: need the baseline and at least one variant")
	}
	if cfg.Rounds <= 0 {
		cfg.Rounds = stats.DefaultPairs
	}
	if cfg.Warmup <= 0 {
		cfg.Warmup = 5
	}
	if cfg.Repeats <= 0 {
		cfg.Repeats = 30
	}
	if cfg.GuardN <= 0 {
		cfg.GuardN = 1
	}
	res := make([]*ArmResult, len(arms))
	for i, a := range arms {
		res[i] = &ArmResult{Name: a.Name, Sets: map[string]*SetResult{}}
		for _, s := range SetNames {
			res[i].Sets[s] = &SetResult{}
		}
	}
	// Every arm must answer every request correctly before anything is timed.
	for _, a := range arms {
		for _, set := range []string{SetTrain, SetHoldout} {
			for _, u := range cfg.urls(set) {
				r := cfg.run(a, set, u, 0, 1)
				r.CPU = -1
				out, err := r.Run(ctx)
				if err == nil {
					err = cfg.appOf(set).Check(u, out)
				}
				if err != nil {
					return res, 0, fmt.Errorf("%s: %w", a.Name, err)
				}
			}
		}
	}
	done := 0
	for round := 0; round < cfg.Rounds; round++ {
		if cfg.OnRound != nil {
			cfg.OnRound(round+1, cfg.Rounds)
		}
		order := make([]int, len(arms))
		for i := range order {
			order[i] = i
			if round%2 == 1 {
				order[i] = len(arms) - 1 - i
			}
		}
		for _, set := range SetNames {
			for _, ai := range order {
				us, err := cfg.measure(ctx, arms[ai], set)
				if err != nil {
					// A round is paired only when complete: drop this round's partial values.
					for _, r := range res {
						for _, s := range r.Sets {
							s.TimesUS = s.TimesUS[:done]
						}
					}
					return res, done, err
				}
				res[ai].Sets[set].TimesUS = append(res[ai].Sets[set].TimesUS, us)
			}
		}
		done++
		fmt.Fprintf(log, "round %d done\n", round+1)
	}
	if cfg.Callgrind {
		for i, a := range arms {
			// Not the guard: bench.php runs for minutes under valgrind on a busy machine, and time is its measure.
			for _, set := range []string{SetTrain, SetHoldout} {
				ipr, err := cfg.instructions(ctx, a, set)
				if err != nil {
					fmt.Fprintf(log, "callgrind %s %s: %v\n", a.Name, set, err)
					if ctx.Err() != nil {
						return res, done, ctx.Err()
					}
					continue
				}
				res[i].Sets[set].IPR = ipr
			}
		}
	}
	return res, done, nil
}

// Compare fills each variant's comparisons against the baseline (res[0]) and decides them together (Holm
// across all variants and sets): time per request, lower is better.
func Compare(res []*ArmResult) error {
	var all []*stats.Comparison
	for _, r := range res {
		for _, s := range r.Sets {
			s.Median = stats.Median(s.TimesUS)
		}
	}
	for _, r := range res[1:] {
		r.Cmp = map[string]*stats.Comparison{}
		for _, set := range SetNames {
			a, b := res[0].Sets[set].TimesUS, r.Sets[set].TimesUS
			if len(a) == 0 || len(a) != len(b) {
				continue
			}
			c, err := stats.Paired(a, b, stats.DefaultConf)
			if err != nil {
				return fmt.Errorf("%s %s: %w", r.Name, set, err)
			}
			r.Cmp[set] = &c
			all = append(all, &c)
		}
	}
	if len(all) > 0 {
		stats.DecideAll(all, []stats.Rule{stats.DefaultRule(false)})
	}
	return nil
}

func (cfg VerifyConfig) urls(set string) []string {
	if set == SetTrain {
		return cfg.Train
	}
	if set == SetHoldout {
		return cfg.Holdout
	}
	return nil
}

func (cfg VerifyConfig) appOf(set string) App {
	if set == SetHoldout && cfg.HoldoutApp.Docroot != "" {
		return cfg.HoldoutApp
	}
	return cfg.App
}

func (cfg VerifyConfig) cpu() int {
	if cfg.CPU > 0 {
		return cfg.CPU
	}
	return max(numCPU()-1, 0)
}

func (cfg VerifyConfig) run(a Arm, set, uri string, warmup, repeats int) CGIRun {
	r := CGIRun{CGI: a.CGI, INI: append(INI(a.Opcache, cfg.JIT), a.INI...), OwnINI: a.OwnINI, Warmup: warmup, Repeats: repeats, CPU: cfg.cpu()}
	if set == SetGuard {
		r.Script = cfg.Guard
		if r.Script == "" {
			r.Script = a.Guard
		}
	} else {
		r.Env = cfg.appOf(set).Env("GET", uri)
	}
	return r
}

// measure is the mean time per request over a set's requests, in microseconds.
func (cfg VerifyConfig) measure(ctx context.Context, a Arm, set string) (float64, error) {
	if set == SetGuard {
		out, err := cfg.run(a, set, "", 1, cfg.GuardN).Run(ctx)
		if err != nil {
			return 0, err
		}
		return float64(out.PerRequest(cfg.GuardN)) / 1e3, nil
	}
	urls := cfg.urls(set)
	if len(urls) == 0 {
		return 0, fmt.Errorf("no %s URLs", set)
	}
	var sum float64
	for _, u := range urls {
		out, err := cfg.run(a, set, u, cfg.Warmup, cfg.Repeats).Run(ctx)
		if err != nil {
			return 0, fmt.Errorf("%s %s: %w", a.Name, u, err)
		}
		sum += float64(out.PerRequest(cfg.Repeats)) / 1e3
	}
	return sum / float64(len(urls)), nil
}

// instructions is callgrind's instruction count per request over a set (measure.Instructions: the median of
// three requests after two warm-ups, each request counted on its own, start-up and shutdown left out).
func (cfg VerifyConfig) instructions(ctx context.Context, a Arm, set string) (float64, error) {
	urls := cfg.urls(set)
	var sum float64
	for _, u := range urls {
		r := cfg.run(a, set, u, 0, 0)
		res, err := measure.Instructions(ctx, measure.InstrOptions{PHPCGI: r.CGI, Script: envValue(r.Env, "SCRIPT_FILENAME"),
			Env: r.Env, NoINI: !r.OwnINI, INI: iniMap(r.INI)})
		if err != nil {
			return 0, fmt.Errorf("%s %s: %w", a.Name, u, err)
		}
		sum += float64(res.PerRequest)
	}
	return sum / float64(len(urls)), nil
}

// iniMap turns -d settings into measure's map. A later setting wins, as with a repeated -d of a scalar setting; a
// list setting given twice (extension=) would keep only the last, and none is (INI and HugeCodePagesINI).
func iniMap(d []string) map[string]string {
	m := make(map[string]string, len(d))
	for _, kv := range d {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

func envValue(env []string, name string) string {
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, name+"="); ok {
			return v
		}
	}
	return ""
}
