// Command gate measures issue 51's targets for `phptune gate` on the demo app, through the whole tool: a slowdown
// of -plant (5%) of the CPU of one route (-route, /api/articles) planted in NEW, raced with the demo's mix for
// -budget (2 minutes): in how many of -runs runs that route is called worse (exit 3); and the same version against
// a copy of itself in another directory (A/A): in how many runs anything is called worse. The two kinds alternate
// run by run, so that the machine's hours fall on both alike; -busy keeps a busy loop on one core beside every run.
// With -faster a third kind of run races a route made 20% cheaper (OLD has a slowdown of 25% planted in it, NEW
// not): that route should be called better, the others no_difference; -kinds runs some kinds alone (aa: the A/A
// runs only). A plant's OLD (NEW when faster) has the plant's code at no share, so that the routes without the
// slowdown run the same code in both. The plant is self-calibrating: the route's request spins, before its response
// is sent, until its process has used -plant more CPU than the request had so far (getrusage), so it adds that
// share of the script's own CPU whatever the machine (a little less of php-fpm's whole, which includes FastCGI's
// work). bench/gate.sh runs it.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/phptune/phptune/bench/internal/heavylock"
)

func main() {
	o := opts{}
	flag.IntVar(&o.runs, "runs", 20, "runs of each kind (planted, A/A)")
	flag.DurationVar(&o.budget, "budget", 2*time.Minute, "each run's --budget")
	flag.Float64Var(&o.plant, "plant", 0.05, "the slowdown planted in NEW's route, a share of its CPU")
	flag.StringVar(&o.route, "route", "/api/articles", "the route the slowdown is planted in")
	flag.BoolVar(&o.busy, "busy", false, "keep a busy loop on one core beside every run")
	flag.BoolVar(&o.faster, "faster", false, "also race a route made 20% cheaper in NEW")
	flag.StringVar(&o.kinds, "kinds", "planted,aa", "the kinds of run, in turn: planted, aa, faster (-faster adds it)")
	flag.StringVar(&o.bin, "bin", "bin/phptune", "the phptune binary")
	flag.StringVar(&o.out, "out", "", "keep each run's result.json under this directory (default: a temporary one, removed)")
	flag.StringVar(&o.lock, "lock", "", "take this lock file (flock) for each run, so that measuring neighbours take turns")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "gate:", err)
		os.Exit(1)
	}
}

type opts struct {
	runs           int
	budget         time.Duration
	plant          float64
	route          string
	busy, faster   bool
	bin, out, lock string
	kinds          string
}

// The demo's mix as its preset has it, each page with its marker.
var mix = []string{"--url", "/articles=3", "--url", "/articles/7=3", "--url", "/api/articles=2", "--url", "/remote=1",
	"--expect-body", "phptune-demo:"}

func run(ctx context.Context, o opts) error {
	names, err := kindNames(o.kinds, o.faster)
	if err != nil {
		return err
	}
	if _, err := os.Stat(o.bin); err != nil {
		return fmt.Errorf("%s: build it first (make build): %w", o.bin, err)
	}
	if o.out == "" {
		dir, err := os.MkdirTemp("", "phptune-gatebench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		o.out = dir
	}
	apps, err := writeApps(o, "workloads/demo")
	if err != nil {
		return err
	}
	if o.busy {
		stopBusy := busyLoop()
		defer stopBusy()
	}
	var planted, aa, faster tally
	var kinds []kind
	for _, k := range []kind{{"planted", "planted", apps.zero, apps.planted, &planted},
		{"A/A", "aa", apps.old, apps.copy, &aa}, {"faster", "faster", apps.slower, apps.zero, &faster}} {
		if slices.Contains(names, k.dir) {
			kinds = append(kinds, k)
		}
	}
	for i := 1; i <= o.runs && ctx.Err() == nil; i++ {
		for _, k := range kinds {
			r, err := gateOnce(ctx, o, k.oldDir, k.newDir, filepath.Join(o.out, fmt.Sprintf("%s-%02d", k.dir, i)))
			if ctx.Err() != nil {
				break
			}
			line := k.t.add(r, err, o.route)
			fmt.Fprintf(os.Stderr, "%s run %d of %d: %s\n", k.name, i, o.runs, line)
		}
	}
	fmt.Printf("phptune gate on the demo, %s budget, %s connections a version; busy loop beside: %v\n", o.budget,
		connections(planted, aa, faster), o.busy)
	if planted.runs > 0 {
		planted.print(fmt.Sprintf("planted +%.0f%% CPU on %s", 100*o.plant, o.route), o.route, true)
	}
	if aa.runs > 0 {
		aa.print("A/A (a copy of itself)", o.route, false)
	}
	if faster.runs > 0 {
		faster.print(fmt.Sprintf("%s 20%% cheaper in NEW", o.route), o.route, false)
		fmt.Printf("  %s called better in %d of %d; every other URL no_difference in %d (the mix holds the route)\n",
			o.route, faster.routeBetter, faster.runs, faster.sameElsewhere)
	}
	return ctx.Err()
}

// kind is one kind of run: its name, the directory its results go under, its two versions, its tally.
type kind struct {
	name, dir, oldDir, newDir string
	t                         *tally
}

// kindNames are the kinds of run list names (comma-separated: planted, aa, faster), faster added by -faster.
func kindNames(list string, faster bool) ([]string, error) {
	names := strings.Split(list, ",")
	if faster {
		names = append(names, "faster")
	}
	for _, n := range names {
		if !slices.Contains([]string{"planted", "aa", "faster"}, n) {
			return nil, fmt.Errorf("-kinds %q: %q is not a kind; want planted, aa or faster", list, n)
		}
	}
	return names, nil
}

type apps struct{ old, copy, zero, planted, slower string }

// writeApps copies the demo (at demo) five times: OLD, a copy of it, one with the plant's code and no slowdown
// (zero), NEW with the plant, and one with a plant of 25% (what zero is 20% cheaper than). The plant's code costs
// every request a little (getrusage, parse_url: +1.5% of /remote's CPU), so a run that races a plant races it
// against zero: the routes the plant is not in are then the same in both versions.
func writeApps(o opts, demo string) (apps, error) {
	in := func(name string) string { return filepath.Join(o.out, name) }
	a := apps{in("old"), in("copy"), in("zero"), in("planted"), in("slower")}
	for _, d := range []string{a.old, a.copy, a.zero, a.planted, a.slower} {
		if err := os.CopyFS(d, os.DirFS(demo)); err != nil {
			return a, fmt.Errorf("copy the demo (run from the repository's top): %w", err)
		}
	}
	for _, p := range []struct {
		dir   string
		share float64
	}{{a.zero, 0}, {a.planted, o.plant}, {a.slower, 0.25}} {
		if err := plant(p.dir, o.route, p.share); err != nil {
			return a, err
		}
	}
	return a, nil
}

// plant makes route in the demo copy dir cost share more CPU.
func plant(dir, route string, share float64) error {
	index := filepath.Join(dir, "index.php")
	src, err := os.ReadFile(index)
	if err != nil {
		return err
	}
	s, n := string(src), 0
	for _, r := range []struct{ old, new string }{
		{"$startedAt = hrtime(true);\n", "$startedAt = hrtime(true);\n" + plantBegin},
		{"(new ResponseEmitter())->emit($response);", fmt.Sprintf(plantEnd, route, share) + "(new ResponseEmitter())->emit($response);"},
	} {
		if strings.Contains(s, r.old) {
			s, n = strings.Replace(s, r.old, r.new, 1), n+1
		}
	}
	if n != 2 {
		return errors.New("the demo's index.php changed: the plant found no place")
	}
	return os.WriteFile(index, []byte(s), 0o644)
}

const plantBegin = `$plantCPU = static function (): float {
    $r = getrusage();
    return $r['ru_utime.tv_sec'] + $r['ru_utime.tv_usec'] / 1e6 + $r['ru_stime.tv_sec'] + $r['ru_stime.tv_usec'] / 1e6;
};
$plantStart = $plantCPU();
`

const plantEnd = `if (parse_url($_SERVER['REQUEST_URI'] ?? '', PHP_URL_PATH) === '%s') {
    $plantNow = $plantCPU();
    $plantUntil = $plantNow + %g * ($plantNow - $plantStart);
    for ($plantX = 0; $plantCPU() < $plantUntil;) {
        for ($i = 0; $i < 200; $i++) {
            $plantX += $i %% 7;
        }
    }
}
`

// busyLoop spins on one core until stopped.
func busyLoop() (stop func()) {
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		x := 0
		for {
			select {
			case <-done:
				sink = x
				return
			default:
			}
			for i := 0; i < 1_000_000; i++ {
				x += i & 7
			}
		}
	}()
	return func() { close(done) }
}

// sink keeps the busy loop's work from being optimised away.
var sink int

type result struct {
	Outcome     string  `json:"outcome"`
	ElapsedS    float64 `json:"elapsed_s"`
	Rounds      int     `json:"rounds"`
	Connections int     `json:"connections"`
	Comparisons []struct {
		Name    string `json:"name"`
		Verdict string `json:"verdict"`
		Gate    string `json:"gate"`
		CPUGate string `json:"cpu_gate"`
		Latency *struct {
			Gate string `json:"gate"`
		} `json:"latency"`
		Change float64 `json:"change"`
		Lo     float64 `json:"lo"`
		Hi     float64 `json:"hi"`
		Rounds int     `json:"rounds"`
		// WorseOn names the figures a worse comparison is worse on: cpu, latency (the p99 at a fixed rate).
		WorseOn []string `json:"worse_on"`
	} `json:"comparisons"`
}

// gateOnce runs one gate into dir and reads its result.
func gateOnce(ctx context.Context, o opts, oldDir, newDir, dir string) (*result, error) {
	if o.lock != "" {
		unlock, err := heavylock.Take(ctx, o.lock)
		if err != nil {
			return nil, err
		}
		defer unlock()
	}
	args := append([]string{"gate", oldDir, newDir, "--budget", o.budget.String(), "--out", dir}, mix...)
	cmd := exec.CommandContext(ctx, o.bin, args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && (!errors.As(err, &ee) || ee.ExitCode() != 3 && ee.ExitCode() != 4) {
		return nil, fmt.Errorf("%v: %s", err, heavylock.LastLine(stderr.String()))
	}
	data, err := os.ReadFile(filepath.Join(dir, "result.json"))
	if err != nil {
		return nil, err
	}
	var r result
	return &r, json.Unmarshal(data, &r)
}

// tally counts one kind's runs.
type tally struct {
	runs, failed, worse, notWorse, undecided int
	routeWorse, routeBetter, otherWorse      int
	// sameElsewhere counts the runs with every URL but the route no_difference.
	sameElsewhere int
	// onCPU and onLatency count the runs with a comparison undecided on each figure.
	onCPU, onLatency  int
	secs, routeChange []float64
	conns             map[int]bool // the runs' connections a version
}

// add counts a run and says what it showed.
func (t *tally) add(r *result, err error, route string) string {
	if err != nil {
		t.failed++
		return "failed: " + err.Error()
	}
	t.runs++
	t.secs = append(t.secs, r.ElapsedS)
	if t.conns == nil {
		t.conns = map[int]bool{}
	}
	t.conns[r.Connections] = true
	switch r.Outcome {
	case "worse":
		t.worse++
	case "not_worse":
		t.notWorse++
	default:
		t.undecided++
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s in %.0f s, %d rounds;", r.Outcome, r.ElapsedS, r.Rounds)
	other, cpu, lat, same := false, false, false, true
	for _, c := range r.Comparisons {
		cpu = cpu || c.CPUGate == "undecided"
		lat = lat || c.Latency != nil && c.Latency.Gate == "undecided"
		same = same && (c.Verdict == "no_difference" || c.Name == "GET "+route || c.Name == "mix")
		if c.Name == "GET "+route {
			t.routeChange = append(t.routeChange, c.Change)
			if c.Gate == "worse" {
				t.routeWorse++
			}
			if c.Verdict == "better" {
				t.routeBetter++
			}
		} else if c.Gate == "worse" {
			other = true
		}
		fmt.Fprintf(&b, " %s %+.1f%% [%+.1f, %+.1f] %s", c.Name, 100*c.Change, 100*c.Lo, 100*c.Hi, c.Gate)
		if c.Verdict != "" {
			fmt.Fprintf(&b, " (%s)", c.Verdict)
		}
		if len(c.WorseOn) > 0 {
			fmt.Fprintf(&b, " on %s", strings.Join(c.WorseOn, " and "))
		}
		b.WriteString(";")
	}
	if other {
		t.otherWorse++
	}
	if same {
		t.sameElsewhere++
	}
	if r.Outcome == "undecided" && cpu {
		t.onCPU++
	}
	if r.Outcome == "undecided" && lat {
		t.onLatency++
	}
	return strings.TrimSuffix(b.String(), ";")
}

func (t *tally) print(what, route string, planted bool) {
	fmt.Printf("%s: %d runs (%d failed): outcome worse %d, not worse %d, undecided %d\n", what, t.runs, t.failed,
		t.worse, t.notWorse, t.undecided)
	if planted {
		fmt.Printf("  %s called worse in %d of %d; another comparison called worse in %d; its change measured: mean %+.1f%%\n",
			route, t.routeWorse, t.runs, t.otherWorse, 100*mean(t.routeChange))
	} else {
		fmt.Printf("  false worse: %d of %d runs (%s in %d, another comparison in %d)\n", t.worse, t.runs, route, t.routeWorse, t.otherWorse)
	}
	if t.undecided > 0 {
		fmt.Printf("  undecided: a comparison's CPU open in %d, its p99 open (leaning worse, or not yet judged) in %d\n",
			t.onCPU, t.onLatency)
	}
	fmt.Printf("  a run's time: mean %.0f s\n", mean(t.secs))
}

// connections are the connections a version the tallies' runs had, in words.
func connections(ts ...tally) string {
	var cs []int
	for _, t := range ts {
		for c := range t.conns {
			if !slices.Contains(cs, c) {
				cs = append(cs, c)
			}
		}
	}
	slices.Sort(cs)
	var words []string
	for _, c := range cs {
		words = append(words, strconv.Itoa(c))
	}
	return strings.Join(words, " or ")
}

func mean(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}
