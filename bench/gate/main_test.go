package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/bench/internal/capture"
)

const route = "/api/articles"

// results are two runs of one kind: the route called worse (on CPU); and one left undecided with the route
// better and another comparison worse, its CPU and its p99 open.
func results(t *testing.T) []*result {
	t.Helper()
	var rs []*result
	for _, j := range []string{
		`{"outcome": "worse", "elapsed_s": 100, "rounds": 10, "connections": 4, "comparisons": [
		  {"name": "GET /api/articles", "verdict": "worse", "gate": "worse", "change": 0.05, "lo": 0.02, "hi": 0.08,
		   "worse_on": ["cpu"]},
		  {"name": "GET /articles", "verdict": "no_difference", "gate": "not_worse", "change": -0.01, "lo": -0.03,
		   "hi": 0.01}]}`,
		`{"outcome": "undecided", "elapsed_s": 200, "rounds": 20, "connections": 8, "comparisons": [
		  {"name": "GET /api/articles", "verdict": "better", "gate": "not_worse", "cpu_gate": "undecided",
		   "change": -0.2, "lo": -0.25, "hi": -0.15},
		  {"name": "GET /remote", "gate": "worse", "latency": {"gate": "undecided"}, "change": 0.1, "lo": 0.05,
		   "hi": 0.15, "worse_on": ["cpu", "latency"]}]}`,
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "result.json"), []byte(j), 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := readGate(dir)
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	return rs
}

// readGate reads a result.json as gateOnce does after the run.
func readGate(dir string) (*result, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// gateOnce runs the binary first; "true" stands for a gate that exited 0 having written dir's result.
	return gateOnce(ctx, opts{bin: "true"}, "old", "new", dir)
}

// The tally counts outcomes, the route's verdicts apart from the others', what an undecided run was open on, the
// runs with no difference on every URL but the route, and a failed run apart; each run's line says its outcome and every comparison.
func TestTally(t *testing.T) {
	rs := results(t)
	var tl tally
	wantLines := []string{
		"worse in 100 s, 10 rounds; GET /api/articles +5.0% [+2.0, +8.0] worse (worse) on cpu; " +
			"GET /articles -1.0% [-3.0, +1.0] not_worse (no_difference)",
		"undecided in 200 s, 20 rounds; GET /api/articles -20.0% [-25.0, -15.0] not_worse (better); " +
			"GET /remote +10.0% [+5.0, +15.0] worse on cpu and latency",
	}
	for i, r := range rs {
		if got := tl.add(r, nil, route); got != wantLines[i] {
			t.Errorf("run %d's line\n %s\nwant\n %s", i+1, got, wantLines[i])
		}
	}
	if got := tl.add(nil, errors.New("exit status 2: no php-fpm"), route); got != "failed: exit status 2: no php-fpm" {
		t.Errorf("a failed run's line: %q", got)
	}
	for _, c := range []struct {
		name      string
		got, want int
	}{
		{"runs", tl.runs, 2}, {"failed", tl.failed, 1}, {"worse", tl.worse, 1}, {"not worse", tl.notWorse, 0},
		{"undecided", tl.undecided, 1}, {"route worse", tl.routeWorse, 1}, {"route better", tl.routeBetter, 1},
		{"another worse", tl.otherWorse, 1}, {"open on CPU", tl.onCPU, 1}, {"open on latency", tl.onLatency, 1},
		{"no difference elsewhere", tl.sameElsewhere, 1},
	} {
		if c.got != c.want {
			t.Errorf("%s: %d, want %d", c.name, c.got, c.want)
		}
	}
	if !slices.Equal(tl.secs, []float64{100, 200}) || !slices.Equal(tl.routeChange, []float64{0.05, -0.2}) {
		t.Errorf("times %v, route's changes %v", tl.secs, tl.routeChange)
	}

	out := capture.Stdout(t, func() { tl.print("planted", route, true) })
	for _, want := range []string{
		"planted: 2 runs (1 failed): outcome worse 1, not worse 0, undecided 1\n",
		"  /api/articles called worse in 1 of 2; another comparison called worse in 1; " +
			"its change measured: mean -7.5%\n",
		"  undecided: a comparison's CPU open in 1, its p99 open (leaning worse, or not yet judged) in 1\n",
		"  a run's time: mean 150 s\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("planted summary lacks %q:\n%s", want, out)
		}
	}
	out = capture.Stdout(t, func() { tl.print("A/A", route, false) })
	want := "  false worse: 1 of 2 runs (/api/articles in 1, another comparison in 1)\n"
	if !strings.Contains(out, want) {
		t.Errorf("A/A summary lacks %q:\n%s", want, out)
	}
}

// fakeGate writes a stand-in for phptune that records its arguments, writes a result where --out says, prints two
// lines on stderr and exits with code.
func fakeGate(t *testing.T, code string) (bin, args string) {
	t.Helper()
	dir := t.TempDir()
	bin, args = filepath.Join(dir, "phptune"), filepath.Join(dir, "args")
	script := "#!/bin/sh\nprintf '%s\\n' \"$@\" > " + args + "\n" +
		"while [ $# -gt 0 ]; do [ \"$1\" = --out ] && out=$2; shift; done\n" +
		"mkdir -p \"$out\" && echo '{\"outcome\": \"worse\"}' > \"$out/result.json\"\n" +
		"echo progress >&2; echo 'gate: the last line' >&2\nexit " + code + "\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, args
}

// gateOnce runs gate OLD NEW with the budget, the result's directory and the demo's mix; exits 3 (worse) and 4
// (undecided) are outcomes whose result is read, any other failure an error ending in gate's last line.
func TestGateOnce(t *testing.T) {
	for _, code := range []string{"0", "3", "4"} {
		bin, args := fakeGate(t, code)
		out := filepath.Join(t.TempDir(), "planted-01")
		o := opts{bin: bin, budget: 2 * time.Minute, lock: filepath.Join(t.TempDir(), "lock")}
		r, err := gateOnce(context.Background(), o, "/x/old", "/x/new", out)
		if err != nil || r.Outcome != "worse" {
			t.Errorf("exit %s: %+v, %v; want the result read", code, r, err)
			continue
		}
		got, err := os.ReadFile(args)
		if err != nil {
			t.Fatal(err)
		}
		want := strings.Join(slices.Concat([]string{"gate", "/x/old", "/x/new", "--budget", "2m0s", "--out", out}, mix),
			"\n")
		if strings.TrimSpace(string(got)) != want {
			t.Errorf("exit %s: arguments\n%s\nwant\n%s", code, got, want)
		}
	}
	bin, _ := fakeGate(t, "1")
	_, err := gateOnce(context.Background(), opts{bin: bin}, "old", "new", t.TempDir())
	if err == nil || !strings.HasSuffix(err.Error(), ": gate: the last line") {
		t.Errorf("exit 1: %v, want an error ending in gate's last line", err)
	}
}

func TestConnections(t *testing.T) {
	a := tally{conns: map[int]bool{8: true, 4: true}}
	b := tally{conns: map[int]bool{4: true, 2: true}}
	if got := connections(a, b, tally{}); got != "2 or 4 or 8" {
		t.Errorf("connections = %q, want \"2 or 4 or 8\"", got)
	}
	if got := connections(tally{}); got != "" {
		t.Errorf("no runs: %q", got)
	}
}

func TestMean(t *testing.T) {
	if mean(nil) != 0 || mean([]float64{1, 2, 6}) != 3 {
		t.Errorf("mean: of nothing %v, of 1 2 6 %v", mean(nil), mean([]float64{1, 2, 6}))
	}
}

// The plant finds both its places in the demo's front controller as it is now: the CPU read at the start, the
// spin before the response for the route alone, at the share asked; the result is valid PHP.
func TestPlantInTheDemo(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "planted")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("..", "..", "workloads", "demo"))); err != nil {
		t.Fatal(err)
	}
	if err := plant(dir, route, 0.05); err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(dir, "index.php")
	b, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	start := strings.Index(src, "$startedAt = hrtime(true);\n$plantCPU = static function (): float {")
	spin := strings.Index(src,
		"=== '/api/articles') {\n    $plantNow = $plantCPU();\n    $plantUntil = $plantNow + 0.05 * (")
	emit := strings.Index(src, "}\n(new ResponseEmitter())->emit($response);")
	if start < 0 || spin < 0 || emit < 0 || !(start < spin && spin < emit) {
		t.Errorf("the plant is not where it belongs (start %d, spin %d, emit %d):\n%s", start, spin, emit, src)
	}
	if !strings.Contains(src, "$plantX += $i % 7;") {
		t.Error("the spin's %% was not written as PHP's %")
	}
	if php, err := exec.LookPath("php"); err == nil {
		if out, err := exec.Command(php, "-l", index).CombinedOutput(); err != nil {
			t.Errorf("php -l: %v\n%s", err, out)
		}
	}
}

// The apps: OLD and its copy as the demo is, zero with the plant's code at no share, the planted NEW and the
// slower one with theirs; every one of them a whole demo.
func TestWriteApps(t *testing.T) {
	out := t.TempDir()
	a, err := writeApps(opts{out: out, route: route, plant: 0.05}, filepath.Join("..", "..", "workloads", "demo"))
	if err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]string{a.old: "", a.copy: "", a.zero: "$plantNow + 0 * (",
		a.planted: "$plantNow + 0.05 * (", a.slower: "$plantNow + 0.25 * ("} {
		b, err := os.ReadFile(filepath.Join(dir, "index.php"))
		if err != nil {
			t.Fatal(err)
		}
		has := strings.Contains(string(b), "$plantUntil = ")
		if want == "" && has || want != "" && !strings.Contains(string(b), want) {
			t.Errorf("%s: plant %v, want %q", filepath.Base(dir), has, want)
		}
	}
}

// A front controller without the plant's places (the demo changed) is an error, not a run without a plant.
func TestPlantNeedsBothPlaces(t *testing.T) {
	for _, src := range []string{
		"<?php\necho 1;\n",
		"<?php\n$startedAt = hrtime(true);\necho 1;\n",
		"<?php\n(new ResponseEmitter())->emit($response);\n",
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "index.php"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := plant(dir, route, 0.05); err == nil || !strings.Contains(err.Error(), "changed") {
			t.Errorf("plant in %q: %v, want the demo-changed error", src, err)
		}
	}
}

func TestRunWantsTheBinary(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "no-phptune")
	err := run(context.Background(), opts{runs: 1, budget: time.Minute, bin: bin, kinds: "planted,aa"})
	if err == nil || !strings.Contains(err.Error(), "build it first") {
		t.Errorf("run without the binary: %v, want a build-it-first error", err)
	}
}

// -kinds names the kinds of run; -faster adds one; a name that is no kind is refused before anything is written.
func TestKindNames(t *testing.T) {
	for _, c := range []struct {
		list   string
		faster bool
		want   string
	}{{"planted,aa", false, "planted aa"}, {"aa", false, "aa"}, {"planted,aa", true, "planted aa faster"}} {
		got, err := kindNames(c.list, c.faster)
		if err != nil || strings.Join(got, " ") != c.want {
			t.Errorf("kindNames(%q, %v) = %q, %v; want %q", c.list, c.faster, got, err, c.want)
		}
	}
	if _, err := kindNames("planted,a/a", false); err == nil || !strings.Contains(err.Error(), `"a/a" is not a kind`) {
		t.Errorf("kindNames of an unknown kind: %v", err)
	}
}
