package phpbuild

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/phptune/phptune/internal/experiment"
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
	Rounds     int    // at most this many interleaved rounds; default stats.DefaultPairs
	Warmup     int    // untimed repeats per run; default 5
	Repeats    int    // timed repeats per URL per run; default 30
	GuardN     int    // timed repeats of bench.php per run; default 1
	CPU        int    // CPU to pin to; default the last one
	JIT        bool
	Callgrind  bool // also count instructions per request with valgrind
	// MinEffect is the smallest change in time per request that counts (default stats.DefaultMinEffect); Alpha
	// this verification's share of the command's error budget, split over every variant and set (default
	// stats.DefaultAlpha); RunAlpha the command's budget, for adjusted p-values (default Alpha).
	MinEffect, Alpha, RunAlpha float64
	// OnRound is told each round's start (progress).
	OnRound func(round, rounds int)
	// timer times one arm on one set (microseconds a request); nil: php-cgi -T, after checking every arm's
	// answers. Tests plant effects with it.
	timer func(ctx context.Context, a Arm, set string) (float64, error)
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

// Verify measures every arm against the first (the baseline) in interleaved rounds, in the engine's Williams
// orders: per round and set, each arm runs each request with php-cgi -T warmup,repeats pinned to one CPU. Each
// variant's time per request on each set is a confidence sequence of the rounds' log ratios against the
// baseline, judged by the engine's rule (package experiment) within Alpha; the rounds stop once every one is
// decided, or at Rounds. It returns the arms with their comparisons and the rounds done. Rounds finished before a
// cancellation are kept and judged (the error is then ctx's).
func Verify(ctx context.Context, arms []Arm, cfg VerifyConfig, log io.Writer) ([]*ArmResult, int, error) {
	if len(arms) < 2 {
		return nil, 0, errors.New("verify: need the baseline and at least one variant")
	}
	cfg = cfg.withDefaults()
	res := make([]*ArmResult, len(arms))
	for i, a := range arms {
		res[i] = &ArmResult{Name: a.Name, Sets: map[string]*SetResult{}}
		for _, s := range SetNames {
			res[i].Sets[s] = &SetResult{}
		}
	}
	if cfg.timer == nil {
		if err := cfg.check(ctx, arms); err != nil {
			return res, 0, err
		}
	}
	v := newVerdicts(len(arms), cfg)
	orders := experiment.Williams(len(arms))
	done := 0
	var err error
	for done < cfg.Rounds {
		if cfg.OnRound != nil {
			cfg.OnRound(done+1, cfg.Rounds)
		}
		if err = cfg.round(ctx, arms, orders[done%len(orders)], res); err != nil {
			for _, r := range res { // a round is paired only when complete: its partial values go
				for _, s := range r.Sets {
					s.TimesUS = s.TimesUS[:done]
				}
			}
			break
		}
		done++
		v.add(res, done-1)
		fmt.Fprintf(log, "round %d done\n", done)
		if v.decided() {
			fmt.Fprintf(log, "every comparison decided after %d rounds\n", done)
			break
		}
	}
	v.judge(res)
	if err == nil && cfg.Callgrind {
		err = cfg.countAll(ctx, arms, res, log)
	}
	return res, done, err
}

func (cfg VerifyConfig) withDefaults() VerifyConfig {
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
	if cfg.MinEffect <= 0 {
		cfg.MinEffect = stats.DefaultMinEffect
	}
	if !(cfg.Alpha > 0 && cfg.Alpha < 1) {
		cfg.Alpha = stats.DefaultAlpha
	}
	if !(cfg.RunAlpha > 0 && cfg.RunAlpha < 1) {
		cfg.RunAlpha = cfg.Alpha
	}
	if cfg.timer == nil {
		cfg.timer = cfg.measure
	}
	return cfg
}

// check: every arm must answer every request correctly before anything is timed.
func (cfg VerifyConfig) check(ctx context.Context, arms []Arm) error {
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
					return fmt.Errorf("%s: %w", a.Name, err)
				}
			}
		}
	}
	return nil
}

// round times every arm on every set once, in order.
func (cfg VerifyConfig) round(ctx context.Context, arms []Arm, order []int, res []*ArmResult) error {
	for _, set := range SetNames {
		for _, ai := range order {
			us, err := cfg.timer(ctx, arms[ai], set)
			if err != nil {
				return err
			}
			res[ai].Sets[set].TimesUS = append(res[ai].Sets[set].TimesUS, us)
		}
	}
	return nil
}

// countAll counts instructions per request on the trained and held-out sets (not the guard: bench.php runs for
// minutes under valgrind on a busy machine, and time is its measure). A count that fails is logged and left out.
func (cfg VerifyConfig) countAll(ctx context.Context, arms []Arm, res []*ArmResult, log io.Writer) error {
	for i, a := range arms {
		for _, set := range []string{SetTrain, SetHoldout} {
			ipr, err := cfg.instructions(ctx, a, set)
			if err != nil {
				fmt.Fprintf(log, "callgrind %s %s: %v\n", a.Name, set, err)
				if ctx.Err() != nil {
					return ctx.Err()
				}
				continue
			}
			res[i].Sets[set].IPR = ipr
		}
	}
	return nil
}

// verdicts are the confidence sequences of each variant against the baseline, per set: log(baseline time /
// variant time) a round, so that a positive mean favours the variant.
type verdicts struct {
	seq  []map[string]*experiment.Sequence // by arm (0, the baseline, unused), then set
	rule experiment.Rule
}

func newVerdicts(arms int, cfg VerifyConfig) *verdicts {
	v := &verdicts{seq: make([]map[string]*experiment.Sequence, arms)}
	for i := 1; i < arms; i++ {
		v.seq[i] = map[string]*experiment.Sequence{}
		for _, set := range SetNames {
			v.seq[i][set] = experiment.NewSequence(0)
		}
	}
	// One comparison per variant and set, all within this verification's share of the budget.
	pairs := (arms - 1) * len(SetNames)
	v.rule = experiment.Rule{MinEffect: cfg.MinEffect, Alpha: cfg.Alpha / float64(pairs), RunAlpha: cfg.RunAlpha}
	return v
}

// add records round r of every arm.
func (v *verdicts) add(res []*ArmResult, r int) {
	for i := 1; i < len(res); i++ {
		for _, set := range SetNames {
			base, mine := res[0].Sets[set].TimesUS[r], res[i].Sets[set].TimesUS[r]
			if base > 0 && mine > 0 {
				v.seq[i][set].Add(math.Log(base / mine))
			}
		}
	}
}

// decided says whether every comparison is decided.
func (v *verdicts) decided() bool {
	for _, bySet := range v.seq[1:] {
		for _, s := range bySet {
			if v.rule.Judge(s) == "" {
				return false
			}
		}
	}
	return true
}

// judge states each variant's comparisons in time per request (a negative change is a gain) and each set's
// median.
func (v *verdicts) judge(res []*ArmResult) {
	for _, r := range res {
		for _, s := range r.Sets {
			s.Median = stats.Median(s.TimesUS)
		}
	}
	for i, r := range res[1:] {
		r.Cmp = map[string]*stats.Comparison{}
		for set, s := range v.seq[i+1] {
			if s.N() > 0 {
				r.Cmp[set] = v.rule.Comparison(s, false)
			}
		}
	}
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
