package main

// Every command's flags, in-process: each command is built with a run that stops once the flags are parsed
// (gh's NewCmdX(f, runF)), and the flags it got are compared with its defaults as each case changes them. Where
// a command turns its flags into a package's options without starting anything, those are checked too.

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/phptune/phptune/internal/check"
	"github.com/phptune/phptune/internal/clients"
	"github.com/phptune/phptune/internal/compare"
	"github.com/phptune/phptune/internal/gate"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/phpbuild"
	"github.com/phptune/phptune/internal/profile"
	"github.com/phptune/phptune/internal/stack"
	"github.com/phptune/phptune/internal/stats"
	"github.com/phptune/phptune/internal/workload"
)

// parse runs the command newCmd makes on args as far as its flags: the flags and positional arguments its run
// would get, or the error that stops it before.
func parse[F any](t *testing.T, newCmd func(*streams, runFunc[F]) *cobra.Command, args ...string) (F, []string, error) {
	t.Helper()
	var got F
	var pos []string
	cmd := newCmd(quiet(), func(_ context.Context, f F, a []string) error {
		got, pos = f, a
		return nil
	})
	cmd.SetArgs(args)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	err := cmd.Execute()
	return got, pos, err
}

// flagCase is a command line and the flags it gives: the defaults, as edit changes them.
type flagCase[F any] struct {
	args []string
	pos  []string // the positional arguments (nil: none)
	edit func(f *F)
}

// testFlags checks each case against the defaults, which args0 (the least a command takes) gives, and that each
// of bad is refused with its message.
func testFlags[F any](t *testing.T, newCmd func(*streams, runFunc[F]) *cobra.Command, args0 []string, cases []flagCase[F], bad map[string]string) F {
	t.Helper()
	def, _, err := parse(t, newCmd, args0...)
	if err != nil {
		t.Fatalf("%v: %v", args0, err)
	}
	for _, c := range cases {
		got, pos, err := parse(t, newCmd, c.args...)
		if err != nil {
			t.Errorf("%v: %v", c.args, err)
			continue
		}
		want := def
		if c.edit != nil {
			c.edit(&want)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%v: flags\n%+v\nwant\n%+v", c.args, got, want)
		}
		if !slices.Equal(pos, c.pos) {
			t.Errorf("%v: arguments %q, want %q", c.args, pos, c.pos)
		}
	}
	for line, want := range bad {
		if _, _, err := parse(t, newCmd, strings.Fields(line)...); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one with %q", line, err, want)
		}
	}
	return def
}

func TestTuneFlags(t *testing.T) {
	def := testFlags(t, newTuneCmd, nil, []flagCase[tuneFlags]{
		{args: []string{"./app", "--url", "/", "--url", "/blog/=3", "--budget", "5m", "--memory", "4GiB", "-v", "--json"},
			pos: []string{"./app"}, edit: func(f *tuneFlags) {
				f.mix.urls, f.budget, f.memory, f.verbose, f.json = []string{"/", "/blog/=3"}, 5*time.Minute, "4GiB", true, true
			}},
		{args: []string{"--rate", "peak", "--p99", "200ms"}, edit: func(f *tuneFlags) { f.ratePeak, f.p99 = true, 200*time.Millisecond }},
		{args: []string{"--rate", "300", "--min-effect", "5", "--alpha", "0.01"}, edit: func(f *tuneFlags) { f.rate, f.minEffect, f.alpha = 300, 5, 0.01 }},
		{args: []string{"--pool-margin", "8"}, edit: func(f *tuneFlags) { f.poolMargin = 8 }},
		{args: []string{"--knob", "opcache=on,off", "--skip", "listen,keepalive", "--only", "opcache,jit", "--ini", "memory_limit=256M"},
			edit: func(f *tuneFlags) {
				f.knobs, f.skip, f.only, f.inis = []string{"opcache=on,off"}, []string{"listen", "keepalive"}, []string{"opcache", "jit"},
					[]string{"memory_limit=256M"}
			}},
		{args: []string{"--duet-pin"}, edit: func(f *tuneFlags) { f.duetPin = true }},
		{args: []string{"--soak", "off", "--no-duet", "--no-screen", "--cgroup", "/x", "--from-pool", "p.conf", "--prefix", "/usr/local"},
			edit: func(f *tuneFlags) {
				f.soak, f.noDuet, f.noScreen, f.cgroup, f.fromPool, f.prefix = "off", true, true, "/x", "p.conf", "/usr/local"
			}},
		{args: []string{"--build", "pgo,pgo+lto", "--php-fpm", "/a", "--php-fpm", "/b", "--builds", "--profile"}, edit: func(f *tuneFlags) {
			f.build, f.phpFPM, f.builds, f.profile = []string{"pgo", "pgo+lto"}, []string{"/a", "/b"}, true, true
		}},
		{args: []string{"--url-file", "u.yaml", "--from-access-log", "a.log", "--log-top", "5", "-m", "POST", "-H", "A: b", "--expect-body", "ok"},
			edit: func(f *tuneFlags) {
				f.mix.urlFile, f.mix.accessLogs, f.mix.logTop = "u.yaml", []string{"a.log"}, 5
				f.method, f.headers, f.expectBody = "POST", []string{"A: b"}, "ok"
			}},
	}, map[string]string{
		"a b":          "takes APP",
		"--rate fast":  "want requests a second",
		"--budget ten": "invalid argument",
	})
	if def.budget != 10*time.Minute || def.method != "GET" || def.minEffect != defaultMinEffectPct || def.alpha != stats.DefaultAlpha ||
		def.timeout != load.DefaultTimeout || def.mix.logTop != 10 || def.poolMargin != 5 {
		t.Errorf("tune's defaults: %+v", def)
	}
}

// TestTuneOptions: tune's flags as tune.Options, the app's stack and the place's limits read as a run would
// (php-fpm and nginx must be installed; nothing is started).
func TestTuneOptions(t *testing.T) {
	if _, err := stack.FindPHPFPM(""); err != nil {
		t.Skipf("%v (apt-get install php8.2-fpm)", err)
	}
	if _, err := stack.FindNginx(""); err != nil {
		t.Skipf("%v (apt-get install nginx)", err)
	}
	app := t.TempDir()
	f, pos, err := parse(t, newTuneCmd, app, "--url", "/", "--url", "/blog/=3", "--budget", "5m", "--memory", "1GiB", "--min-effect", "5",
		"--pool-margin", "8", "--knob", "opcache=on,off", "--only", "opcache", "--ini", "memory_limit=256M", "--soak", "off", "--no-screen", "-m", "POST")
	if err != nil {
		t.Fatal(err)
	}
	a, err := workload.Resolve(pos)
	if err != nil {
		t.Fatal(err)
	}
	o, err := f.options(context.Background(), a, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	f.screening(&o, func() []load.MixItem { return o.URLs }, io.Discard)
	var uris []string
	for _, u := range o.URLs {
		uris = append(uris, u.URI+"="+strings.Repeat("*", u.Weight))
	}
	var knobs []string
	for _, k := range o.Knobs {
		knobs = append(knobs, k.Name)
	}
	if o.Stack.App != app || o.Budget != 5*time.Minute || o.MinEffect != 0.05 || o.PoolMargin != 0.08 || o.Memory != 1<<30 || o.MemoryFrom != "--memory 1GiB" ||
		o.Soak != -1 || o.Screen != nil || !o.Duet || !o.Split || o.Request.Method != "POST" || !slices.Equal(uris, []string{"/=*", "/blog/=***"}) ||
		!slices.Equal(knobs, []string{"opcache"}) || !o.Asked["opcache"] || o.Pins["memory_limit"] != "256M" ||
		o.BaseName != "your starting point" || o.Limits == nil {
		t.Errorf("options: %+v", o)
	}
	// A margin of nothing cannot be shown: refused before anything starts.
	if f, _, err = parse(t, newTuneCmd, app, "--pool-margin", "0"); err != nil {
		t.Fatal(err)
	}
	if _, err = f.options(context.Background(), a, io.Discard); err == nil || !strings.Contains(err.Error(), "--pool-margin 0") {
		t.Errorf("--pool-margin 0: %v, want a usage error naming it", err)
	}
	// Without --no-screen, tune screens with profile's counters where valgrind, strace and php-cgi are installed,
	// counting the URLs it is given when it counts (after a URL file's login).
	f, _, err = parse(t, newTuneCmd, app, "--memory", "1GiB")
	if err != nil {
		t.Fatal(err)
	}
	if o, err = f.options(context.Background(), a, io.Discard); err != nil {
		t.Fatal(err)
	}
	f.screening(&o, func() []load.MixItem { return o.URLs }, io.Discard)
	if c, missing := profile.NewCounters(o.Stack, nil, o.Request); (c == nil) != (o.Screen == nil) ||
		o.Screen != nil && (o.Screen.Method != c.Method || o.Screen.Instructions == nil || o.Screen.Syscalls == nil) {
		t.Errorf("screener %+v, with %s missing", o.Screen, missing)
	}
	for args, want := range map[string]string{
		"--build pgo+o3":          "--build pgo+o3: want pgo",
		"--build pgo --skip php":  "--build and --skip php",
		"--screen --no-screen":    "give one of them",
		"--prefix /usr/local":     "give --from-pool FILE too",
		"--soak forever":          `--soak "forever"`,
		"--memory lots":           `--memory "lots"`,
		"--rate peak":             "give --from-access-log",
		"--knob max_children=1,2": "give one value to pin it",
		"--skip nosuch":           "--skip nosuch: no such knob",
		"--url / --expect-body (": "--expect-body: error parsing regexp",
	} {
		f, _, err := parse(t, newTuneCmd, append([]string{app}, strings.Fields(args)...)...)
		if err == nil {
			_, err = f.options(context.Background(), a, io.Discard)
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("tune %s: %v, want an error with %q", args, err, want)
		}
	}
}

func TestBenchFlags(t *testing.T) {
	const target = "http://127.0.0.1:1/"
	def := testFlags(t, newBenchCmd, []string{target}, []flagCase[benchFlags]{
		{args: []string{target, "-c", "32", "-d", "30s"}, pos: []string{target},
			edit: func(f *benchFlags) { f.connections, f.duration, f.durationSet = 32, 30*time.Second, true }},
		{args: []string{target, "-n", "1000", "--warmup", "0s"}, pos: []string{target}, edit: func(f *benchFlags) { f.requests, f.warmup = 1000, 0 }},
		{args: []string{target, "--rate", "500", "--repeat", "5", "--max-inflight", "8", "--procs", "2"}, pos: []string{target},
			edit: func(f *benchFlags) { f.rate, f.repeat, f.maxInflight, f.procs = 500, 5, 8, 2 }},
		{args: []string{target, "--engine", "k6", "--k6-instances", "2", "--k6-host", "h1", "--k6-host", "h2"}, pos: []string{target},
			edit: func(f *benchFlags) {
				f.engine.engine, f.engine.instances, f.engine.hosts = "k6", 2, []string{"h1", "h2"}
			}},
		{args: []string{target, "--fpm-status", "/status", "--json", "--out", "d", "--no-keepalive", "--expect-status", "200"}, pos: []string{target},
			edit: func(f *benchFlags) {
				f.status, f.json, f.out, f.noKeepalive, f.expectStatus = "/status", true, "d", true, "200"
			}},
	}, map[string]string{
		"":                       "missing TARGET",
		target + " " + target:    "takes TARGET",
		target + " --rate x":     "invalid argument",
		target + " --nosuchflag": "unknown flag",
	})
	if def.connections != 4 || def.duration != 10*time.Second || def.warmup != time.Second || def.repeat != 1 || def.engine.engine != "phptune" ||
		def.engine.instances != 1 || def.engine.ssh != "ssh" {
		t.Errorf("bench's defaults: %+v", def)
	}
}

// TestBenchOptions: bench's flags as the generator's options; nothing is sent.
func TestBenchOptions(t *testing.T) {
	options := func(args ...string) (load.Options, error) {
		f, pos, err := parse(t, newBenchCmd, args...)
		if err != nil {
			return load.Options{}, err
		}
		return f.options(context.Background(), pos[0], io.Discard)
	}
	o, err := options("http://127.0.0.1:1/", "-c", "8", "-d", "2s", "-m", "POST", "-H", "X-A: b", "--no-keepalive", "--expect-status", "200",
		"--expect-body", "ok", "--warmup", "0s", "--url", "/a=2", "--url", "/b")
	if err != nil {
		t.Fatal(err)
	}
	if o.Connections != 8 || o.Duration != 2*time.Second || o.Requests != 0 || o.Warmup != 0 || o.Request.Method != "POST" ||
		o.Request.KeepAlive || len(o.Request.Headers) != 1 || o.Request.Headers[0] != [2]string{"X-A", "b"} || o.ExpectStatus == nil ||
		o.ExpectBody.String() != "ok" || len(o.Mix) != 2 || o.Mix[0].Weight != 2 || o.Engine != nil {
		t.Errorf("options: %+v", o)
	}
	o, err = options("fcgi://127.0.0.1:9000/srv/index.php", "--request-uri", "/a", "--document-root", "/srv", "-n", "10")
	if err != nil || o.Target.RequestURI != "/a" || o.Target.DocumentRoot != "/srv" || o.Requests != 10 || o.Duration != 0 {
		t.Errorf("FastCGI options: %+v, %v", o, err)
	}
	for args, want := range map[string]string{
		"http://127.0.0.1:1/ -n 10 -d 1s":                         "give -n or -d, not both",
		"http://127.0.0.1:1/ -d 0s":                               "-d 0s: want a positive duration",
		"http://127.0.0.1:1/ --request-uri /x":                    "FastCGI targets only",
		"http://127.0.0.1:1/ --k6-instances 2":                    "need --engine k6",
		"fcgi://127.0.0.1:9000/srv/index.php --engine k6":         "k6 speaks HTTP",
		"http://127.0.0.1:1/ --engine wrk":                        `--engine "wrk"`,
		"http://127.0.0.1:1/ --url blog":                          "give a path starting with /",
		"http://127.0.0.1:1/ --expect-body (":                     "--expect-body: error parsing regexp",
		"http://127.0.0.1:1/ --engine k6 --k6-instances 0 -c 2":   "want at least 1",
		"http://127.0.0.1:1/ --engine k6 --k6-host h --k6-ssh ''": "--k6-ssh: want the ssh command",
	} {
		words, err := compare.SplitWords(args)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := options(words...); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("bench %s: %v, want an error with %q", args, err, want)
		}
	}
}

func TestCompareFlags(t *testing.T) {
	def := testFlags(t, newCompareCmd, []string{"a.json", "b.json"}, []flagCase[compareFlags]{
		{args: []string{"--interleave", "A", "B", "-c", "8", "-d", "2s", "--fail-if-worse", "--repeat", "5", "--min-effect", "1", "--alpha", "0.01"},
			pos: []string{"A", "B"}, edit: func(f *compareFlags) {
				f.interleave, f.failIfWorse, f.rounds, f.minEffect, f.alpha = true, true, 5, 1, 0.01
				f.load.connections, f.load.duration, f.load.durationSet = 8, 2*time.Second, true
			}},
		{args: []string{"a.json", "b.json", "c.json", "--json", "--out", "d"}, pos: []string{"a.json", "b.json", "c.json"},
			edit: func(f *compareFlags) { f.json, f.out = true, "d" }},
	}, map[string]string{"a.json": "two results or more"})
	if def.alpha != stats.DefaultAlpha || def.minEffect != defaultMinEffectPct || def.rounds != 20 {
		t.Errorf("compare's defaults: %+v", def)
	}
	// --alpha is a chance: one out of (0, 1) is refused before any result is read.
	for _, alpha := range []string{"0", "1", "2", "-0.05"} {
		f, pos, err := parse(t, newCompareCmd, "a.json", "b.json", "--alpha", alpha)
		if err == nil {
			err = quiet().runCompare(context.Background(), f, pos)
		}
		if want := "--alpha " + alpha + ": want a chance between 0 and 1, such as 0.05"; err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("compare --alpha %s: %v, want an error with %q", alpha, err, want)
		}
	}
	// An arm's flags over compare's: -d given to compare rules out an arm's -n.
	f, _, err := parse(t, newCompareCmd, "--interleave", "x", "y", "-d", "2s", "-c", "3")
	if err != nil {
		t.Fatal(err)
	}
	o, err := armOptions(context.Background(), f.load, "http://127.0.0.1:1/ -H 'A: b c'", io.Discard)
	if err != nil || o.Connections != 3 || o.Duration != 2*time.Second || o.Request.Headers[0] != [2]string{"A", "b c"} {
		t.Errorf("arm: %+v, %v", o, err)
	}
	if _, err := armOptions(context.Background(), f.load, "http://127.0.0.1:1/ -n 5", io.Discard); err == nil ||
		!strings.Contains(err.Error(), "give -n or -d") {
		t.Errorf("an arm's -n under compare's -d: %v", err)
	}
	if _, err := armOptions(context.Background(), f.load, "http://a/ http://b/", io.Discard); err == nil ||
		!strings.Contains(err.Error(), "got 2 targets") {
		t.Errorf("an arm of two targets: %v", err)
	}
}

func TestCheckFlags(t *testing.T) {
	def := testFlags(t, newCheckCmd, nil, []flagCase[checkFlags]{
		{args: []string{"/run/php.sock", "--fpm-status", "/st", "--for", "10m", "--interval", "2s", "--json"},
			pos: []string{"/run/php.sock"}, edit: func(f *checkFlags) {
				f.statusPath, f.statusSet, f.forDur, f.interval, f.json = "/st", true, 10*time.Minute, 2*time.Second, true
			}},
		// The old name, a hidden alias, sets the same.
		{args: []string{"/run/php.sock", "--status-path", "/st"}, pos: []string{"/run/php.sock"},
			edit: func(f *checkFlags) { f.statusPath, f.statusSet = "/st", true }},
		{args: []string{"a", "b", "--prefix", "/srv/fpm", "--out", "d"}, pos: []string{"a", "b"},
			edit: func(f *checkFlags) { f.prefix, f.out = "/srv/fpm", "d" }},
	}, nil)
	// --fpm-status's default ("": check.DefaultStatusPath, or a pool file's own) is filled in by the run.
	if def.forDur != check.DefaultFor || def.interval != check.DefaultInterval || def.statusPath != "" || def.statusSet {
		t.Errorf("check's defaults: %+v", def)
	}
	// The flags' own errors come before any pool is looked at.
	for args, want := range map[string]string{
		"--for 0s":               "--for and --interval must be positive",
		"--for 1m --interval 5m": "longer than --for",
		"--fpm-status st":        `--fpm-status "st": want a path starting with /`,
		"--status-path st":       `--fpm-status "st": want a path starting with /`,
	} {
		f, pos, err := parse(t, newCheckCmd, strings.Fields(args)...)
		if err == nil {
			err = quiet().runCheck(context.Background(), f, pos)
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("check %s: %v, want an error with %q", args, err, want)
		}
	}
}

func TestProfileFlags(t *testing.T) {
	def := testFlags(t, newProfileCmd, nil, []flagCase[profileFlags]{
		{args: []string{"./app", "--compare", "opcache=off", "--compare", "jit=tracing", "--functions"}, pos: []string{"./app"},
			edit: func(f *profileFlags) { f.compares, f.functions = []string{"opcache=off", "jit=tracing"}, 15 }},
		{args: []string{"--functions=5", "--skip", "syscalls", "--warmup", "3", "--wall", "--slowlog", "1s"},
			edit: func(f *profileFlags) {
				f.functions, f.skip, f.warmup, f.wall, f.slowlog = 5, []string{"syscalls"}, 3, true, time.Second
			}},
		{args: []string{"--knob", "pm=static", "--ini", "a=b", "--from-pool", "p", "--php-fpm", "/x", "--php-cgi", "/y"},
			edit: func(f *profileFlags) {
				f.knobs, f.inis, f.fromPool, f.phpFPM, f.phpCGI = []string{"pm=static"}, []string{"a=b"}, "p", "/x", "/y"
			}},
	}, map[string]string{"a b": "takes APP"})
	if def.requests != 200 || def.warmup != 5 || def.instrWarmup != 2 || def.instrN != 3 || def.functions != 0 || def.method != "GET" {
		t.Errorf("profile's defaults: %+v", def)
	}
}

func TestServeFlags(t *testing.T) {
	def := testFlags(t, newServeCmd, nil, []flagCase[serveFlags]{
		{args: []string{"./app", "--port", "8080", "--for", "1m", "--json", "--env-file", "e", "--pm", "static", "--max-children", "8"},
			pos: []string{"./app"}, edit: func(f *serveFlags) {
				f.port, f.forDur, f.json, f.envFile, f.pm, f.maxChildren = 8080, time.Minute, true, "e", "static", 8
			}},
		{args: []string{"--recommendation", "r.json", "--out", "run", "--php-fpm", "/x", "--nginx", "/y", "--user", "u", "--front", "app.php"},
			edit: func(f *serveFlags) {
				f.recommendation, f.out, f.phpFPM, f.nginx, f.user, f.front = "r.json", "run", "/x", "/y", "u", "app.php"
			}},
	}, map[string]string{"a b": "takes APP", "--port x": "invalid argument"})
	if def.pm != "dynamic" || def.maxChildren != 5 {
		t.Errorf("serve's defaults: %+v", def)
	}
}

func TestBuildFlags(t *testing.T) {
	def := testFlags(t, newBuildCmd, nil, []flagCase[buildFlags]{
		{args: []string{"wordpress", "--variants", "pgo,pgo+lto", "--url", "/", "--holdout-url", "/a", "--no-verify", "--jobs", "4"},
			pos: []string{"wordpress"}, edit: func(f *buildFlags) {
				f.variants, f.urls, f.holdout, f.noVerify, f.jobs = []string{"pgo", "pgo+lto"}, []string{"/"}, []string{"/a"}, true, 4
			}},
		{args: []string{"--train-mode", "live", "--train-duration", "5s", "--jit", "--from-access-log", "a.log", "--make", "gmake"},
			edit: func(f *buildFlags) {
				f.trainMode, f.trainDuration, f.jit, f.mix.accessLogs, f.make = "live", 5*time.Second, true, []string{"a.log"}, "gmake"
			}},
	}, map[string]string{"a b": "takes APP"})
	if !slices.Equal(def.variants, []string{phpbuild.Baseline, phpbuild.PGO}) || def.debian != "php8.2" || def.trainN != 50 ||
		def.trainMode != "cgi" || def.rounds != 10 || def.repeats != 30 || def.throughputTrial != 3*time.Second || !reflect.DeepEqual(def, buildDefaults()) {
		t.Errorf("build's defaults: %+v", def)
	}
}

// TestBuildOptions: build's flags as phpbuild.Options: what is built, trained on and held out; nothing is built.
func TestBuildOptions(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	options := func(args ...string) (phpbuild.Options, error) {
		f, pos, err := parse(t, newBuildCmd, args...)
		if err != nil {
			return phpbuild.Options{}, err
		}
		o, _, err := f.options(pos, io.Discard)
		return o, err
	}
	o, err := options()
	if err != nil {
		t.Fatal(err)
	}
	if o.AppName != "demo app" || !slices.Equal(o.Train, phpbuild.DemoTrain) || !slices.Equal(o.Holdout, phpbuild.DemoHoldout) ||
		!slices.Equal(o.Variants, []string{"baseline", "pgo"}) || !o.Verify || o.CacheDir != filepath.Join(os.Getenv("XDG_CACHE_HOME"), "phptune", "builds") {
		t.Errorf("the demo's options: %+v", o)
	}
	for _, c := range []struct {
		args     []string
		variants []string
	}{{[]string{"--variants", "pgo"}, []string{"baseline", "pgo"}}, {[]string{"--variants", "pgo", "--no-verify"}, []string{"pgo"}}} {
		if o, err := options(c.args...); err != nil || !slices.Equal(o.Variants, c.variants) {
			t.Errorf("%v: variants %v, %v; want %v", c.args, o.Variants, err, c.variants)
		}
	}
	if o, err := options("--holdout", "demo"); err != nil || o.HoldoutApp == nil || !slices.Equal(o.Holdout, phpbuild.DemoRoutes()) {
		t.Errorf("--holdout demo: %v held out, %v", o.Holdout, err)
	}
	empty, docroot := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(docroot, "index.php"), []byte("<?php echo 1;"), 0o644); err != nil {
		t.Fatal(err)
	}
	if o, err := options(docroot, "--url", "/", "--holdout-url", "/a"); err != nil || o.AppName != docroot || !slices.Equal(o.Train, []string{"/"}) {
		t.Errorf("a docroot: %+v, %v", o, err)
	}
	for args, want := range map[string]string{
		"--variants o3":                    "--variants o3: want baseline",
		"--train-mode x":                   "--train-mode x: want cgi or live",
		"--rounds 3":                       "at least 6 rounds",
		empty:                              "want a docroot with index.php",
		docroot:                            "say which requests to train on",
		docroot + " --url /":               "give held-out requests",
		docroot + " --train " + empty:      "give the app to train on once",
		"--holdout " + empty:               "--holdout " + empty + ": want a docroot",
		"--log-keep static":                "give the log",
		docroot + " --url / --holdout-url": "flag needs an argument",
	} {
		if _, err := options(strings.Fields(args)...); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("build %s: %v, want an error with %q", args, err, want)
		}
	}
}

func TestClientsFlags(t *testing.T) {
	def := testFlags(t, newClientsCmd, nil, []flagCase[clientsFlags]{
		// phpbench's retry threshold comes with back-to-back iterations, unless given.
		{args: []string{"--sequential"}, edit: func(f *clientsFlags) { f.sequential, f.retryThreshold = true, 5 }},
		{args: []string{"--sequential", "--retry-threshold", "2"}, edit: func(f *clientsFlags) { f.sequential, f.retryThreshold = true, 2 }},
		{args: []string{"--warmup", "50", "--neighbours=false", "--no-phpredis", "--target", "redis", "--fibers", "5,10"},
			edit: func(f *clientsFlags) {
				f.warmup, f.neighbours, f.noPhpredis, f.targets, f.fibers = 50, false, true, []string{"redis"}, []int{5, 10}
			}},
	}, map[string]string{"x": "takes no arguments", "--fibers a": "invalid argument"})
	if !slices.Equal(def.targets, []string{clients.Tarantool, clients.Redis}) || !slices.Equal(def.models, clients.Models) ||
		def.revs != 10000 || def.iterations != 10 || def.warmup != 200 || def.pause != time.Second || !def.neighbours || def.php != "php" {
		t.Errorf("clients' defaults: %+v", def)
	}
}

func TestMixFlags(t *testing.T) {
	testFlags(t, newMixCmd, nil, []flagCase[mixCmdFlags]{
		{args: []string{"--url", "/", "--url-file", "u.yaml", "-m", "POST", "-H", "A: b"}, edit: func(f *mixCmdFlags) {
			f.mix.urls, f.mix.urlFile, f.method, f.headers = []string{"/"}, "u.yaml", "POST", []string{"A: b"}
		}},
		{args: []string{"--from-access-log", "a.log", "--from-access-log", "a.log.1", "--log-keep", "static", "--log-exclude", "^/admin"},
			edit: func(f *mixCmdFlags) {
				f.mix.accessLogs, f.mix.logKeep, f.mix.logExclude = []string{"a.log", "a.log.1"}, "static", "^/admin"
			}},
	}, map[string]string{"x": "takes no arguments"})
	// mix runs in-process whole: it prints the mix and sends nothing.
	var out bytes.Buffer
	cmd := newMixCmd(&streams{out: &out, err: io.Discard}, nil)
	cmd.SetArgs([]string{"--url", "/a=2", "--url", "/b", "-m", "POST"})
	if err := cmd.Execute(); err != nil || out.String() != "     2  POST   /a\n     1  POST   /b\n" {
		t.Errorf("mix printed %q, %v", out.String(), err)
	}
	if err := quiet().runMix(context.Background(), mixCmdFlags{method: "GET"}, nil); err == nil || !strings.Contains(err.Error(), "give --url") {
		t.Errorf("mix without URLs: %v", err)
	}
}

func TestReportFlags(t *testing.T) {
	testFlags(t, newReportCmd, []string{"r.json"}, []flagCase[reportFlags]{
		{args: []string{"r.json", "--out", "x.html"}, pos: []string{"r.json"}, edit: func(f *reportFlags) { f.out = "x.html" }},
	}, map[string]string{"": "missing RESULT.json", "a b": "takes RESULT.json"})
}

func TestWorkloadFlags(t *testing.T) {
	testFlags(t, newWorkloadListCmd, nil, []flagCase[workloadFlags]{
		{args: []string{"--json"}, edit: func(f *workloadFlags) { f.json = true }},
	}, map[string]string{"x": "takes no arguments"})
	testFlags(t, newWorkloadPrepareCmd, []string{"wordpress"}, []flagCase[workloadFlags]{
		{args: []string{"wordpress", "--dir", "/srv/x", "--json"}, pos: []string{"wordpress"},
			edit: func(f *workloadFlags) { f.dir, f.json = "/srv/x", true }},
	}, map[string]string{"": "missing NAME"})
}

func TestK6Flags(t *testing.T) {
	const target = "http://h/"
	testFlags(t, newExportK6Cmd, []string{target}, []flagCase[exportFlags]{
		{args: []string{target, "--out", "d", "--name", "n", "--parallelism", "4", "-c", "200", "-d", "5m"}, pos: []string{target},
			edit: func(f *exportFlags) {
				f.out, f.name, f.parallelism = "d", "n", 4
				f.load.connections, f.load.duration, f.load.durationSet = 200, 5*time.Minute, true
			}},
	}, map[string]string{"": "missing TARGET"})
	def := testFlags(t, newIngestK6Cmd, []string{"a.json"}, []flagCase[ingestFlags]{
		{args: []string{"a.json", "b.json", "--scenario", "s", "--target", "t", "--timeout", "60s", "--json"}, pos: []string{"a.json", "b.json"},
			edit: func(f *ingestFlags) { f.scenario, f.target, f.timeout, f.json = "s", "t", time.Minute, true }},
	}, map[string]string{"": "missing FILE"})
	if def.target != "k6" || def.timeout != load.DefaultTimeout {
		t.Errorf("ingest's defaults: %+v", def)
	}
}

func TestGateFlags(t *testing.T) {
	old := []string{"./old", "./new"}
	def := testFlags(t, newGateCmd, old, []flagCase[gateFlags]{
		{args: []string{"./old", "./new", "--url", "/", "--url", "/blog/=3", "--budget", "5m", "--min-effect", "5", "--alpha", "0.01"},
			pos: old, edit: func(f *gateFlags) {
				f.mix.urls, f.budget, f.minEffect, f.alpha = []string{"/", "/blog/=3"}, 5*time.Minute, 5, 0.01
			}},
		{args: []string{"main", "HEAD", "--git", ".", "--docroot", "public", "--writable", "cache", "--writable", "public/uploads"},
			pos: []string{"main", "HEAD"}, edit: func(f *gateFlags) {
				f.git, f.docroot, f.writable = ".", "public", []string{"cache", "public/uploads"}
			}},
		{args: []string{"./old", "./new", "--url-file", "u.yaml", "--from-access-log", "a.log", "--log-top", "5", "-m", "POST", "-H", "A: b",
			"--body", "b.json", "--expect-body", "ok", "--front", "app.php", "--timeout", "3s"}, pos: old, edit: func(f *gateFlags) {
			f.mix.urlFile, f.mix.accessLogs, f.mix.logTop = "u.yaml", []string{"a.log"}, 5
			f.method, f.headers, f.bodyFile, f.expectBody, f.front, f.timeout = "POST", []string{"A: b"}, "b.json", "ok", "app.php", 3*time.Second
		}},
		{args: []string{"./old", "./new", "--fail-fast", "--no-latency"}, pos: old,
			edit: func(f *gateFlags) { f.failFast, f.noLatency = true, true }},
		{args: []string{"./old", "./new", "--php-fpm", "/x", "--nginx", "/y", "--user", "u"}, pos: old,
			edit: func(f *gateFlags) { f.phpFPM, f.nginx, f.user = "/x", "/y", "u" }},
		{args: []string{"./old", "./new", "--preset", "demo"}, pos: old, edit: func(f *gateFlags) { f.preset = "demo" }},
		{args: []string{"./old", "./new", "--out", "d", "--markdown", "s.md", "--junit", "g.xml", "--annotations", "--json"}, pos: old,
			edit: func(f *gateFlags) {
				f.out, f.markdown, f.junit, f.annotations, f.json = "d", "s.md", "g.xml", true, true
			}},
	}, map[string]string{
		"./old":                   "missing OLD and NEW",
		"a b c":                   "takes OLD and NEW",
		"a b --budget ten":        "invalid argument",
		"a b --min-effect lots":   "invalid argument",
		"a b --nosuchflag":        "unknown flag",
		"a b --url / --budgte 1m": "unknown flag",
	})
	// gate is a CI job's step: two minutes, where tune's ten decide the knobs; the rest is tune's.
	if def.budget != 2*time.Minute || def.method != "GET" || def.minEffect != defaultMinEffectPct || def.alpha != stats.DefaultAlpha ||
		def.timeout != load.DefaultTimeout || def.mix.logTop != 10 || def.annotations || def.json || def.out != "" || def.failFast {
		t.Errorf("gate's defaults: %+v", def)
	}
}

// TestGateOptions: gate's flags as gate.Options, every setting checked as a run would before anything starts
// (php-fpm and nginx must be installed; nothing is started).
func TestGateOptions(t *testing.T) {
	if _, err := stack.FindPHPFPM(""); err != nil {
		t.Skipf("%v (apt-get install php8.2-fpm)", err)
	}
	if _, err := stack.FindNginx(""); err != nil {
		t.Skipf("%v (apt-get install nginx)", err)
	}
	f, _, err := parse(t, newGateCmd, "./old", "./new", "--url", "/", "--url", "/blog/=3", "--budget", "5m", "--min-effect", "5",
		"--alpha", "0.01", "-m", "POST", "--expect-body", "ok", "--writable", "cache", "--front", "app.php")
	if err != nil {
		t.Fatal(err)
	}
	o, _, err := f.options(io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, u := range o.URLs {
		uris = append(uris, u.URI+"="+strings.Repeat("*", u.Weight))
		if u.ExpectBody == nil || u.ExpectBody.String() != "ok" {
			t.Errorf("%s: checked against %v, want --expect-body's ok", u.URI, u.ExpectBody)
		}
	}
	if o.Budget != 5*time.Minute || o.MinEffect != 0.05 || o.Alpha != 0.01 || o.Timeout != load.DefaultTimeout || o.Request.Method != "POST" ||
		!o.Request.KeepAlive || !slices.Equal(uris, []string{"/=*", "/blog/=***"}) || o.Old.Label != "OLD" || o.New.Label != "NEW" ||
		o.Stack.Front != "app.php" || !slices.Equal(o.Stack.Writable, []string{"cache"}) || o.LogIn != nil {
		t.Errorf("options: %+v", o)
	}
	// --preset: the preset's pages with their markers and its front controller, unless URLs are given.
	for args, want := range map[string]string{"--preset demo": "/articles /articles/7 /api/articles /remote",
		"--preset demo --url /x": "/x"} {
		f, _, err := parse(t, newGateCmd, append([]string{"./old", "./new"}, strings.Fields(args)...)...)
		if err != nil {
			t.Fatal(err)
		}
		o, app, err := f.options(io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, u := range o.URLs {
			got = append(got, u.URI)
			if u.ExpectBody == nil && u.URI != "/x" {
				t.Errorf("%s: %s has no marker", args, u.URI)
			}
		}
		if strings.Join(got, " ") != want || app.Workload == nil || o.Stack.Front != app.Stack.Front || o.Stack.Front == "" {
			t.Errorf("%s: URLs %q, front %q; want %q and the preset's front", args, got, o.Stack.Front, want)
		}
	}
	for args, want := range map[string]string{
		"--preset wordpres":                "did you mean wordpress",
		"":                                 "no URL to race",
		"--url blog":                       "give a path starting with /",
		"--url / --budget 5s":              "give at least --budget 10s",
		"--url / --min-effect 0":           "--min-effect 0: want more than 0",
		"--url / --alpha 1":                "--alpha 1: want more than 0 and less than 1",
		"--url / --timeout 0s":             "--timeout 0s: want a positive duration",
		"--url / --expect-body (":          "--expect-body: error parsing regexp",
		"--url / --writable ../etc":        "--writable ../etc: give a path inside the docroot",
		"--url / --writable /tmp/x":        "--writable /tmp/x: give a path inside the docroot",
		"--url / --junit no/such/dir/x.xm": "its directory does not exist",
		"--url / --log-top 5":              "give the log",
		"--url-file missing.yaml":          "--url-file",
		"--url / -H nocolon":               "nocolon",
	} {
		f, _, err := parse(t, newGateCmd, append([]string{"./old", "./new"}, strings.Fields(args)...)...)
		if err == nil {
			_, _, err = f.options(io.Discard)
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("gate %s: %v, want an error with %q", args, err, want)
		}
	}
	// The versions are checked by the run before its dir is made: nothing is created here.
	dir := t.TempDir()
	for args, want := range map[string]string{
		"missing-old " + dir + " --url /":             "OLD missing-old: not a directory",
		dir + " " + dir + " --url /":                  "has no front controller index.php",
		dir + " " + dir + " --url / --docroot public": "--docroot public is the docroot inside each --git",
	} {
		f, pos, err := parse(t, newGateCmd, strings.Fields(args)...)
		if err == nil {
			err = quiet().runGate(context.Background(), f, pos)
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("gate %s: %v, want an error with %q", args, err, want)
		}
	}
	if left, _ := os.ReadDir(dir); len(left) > 0 {
		t.Errorf("gate left %s in a version's docroot", left[0].Name())
	}
}

// TestGateWritesToItsStreams: the summary and the annotations go to the command's stdout, or with --json the
// result there and the annotations to its stderr; result.json and the JUnit XML are written whole.
func TestGateWritesToItsStreams(t *testing.T) {
	t.Setenv("GITHUB_ACTIONS", "")
	t.Setenv("GITHUB_STEP_SUMMARY", "")
	res := &gate.Result{Schema: gate.Schema, Old: gate.Version{Label: "OLD", Dir: "old"}, New: gate.Version{Label: "NEW", Dir: "new"},
		Outcome: gate.Worse, MinEffect: 0.03, Alpha: 0.05, Rounds: 4, BudgetS: 120, ElapsedS: 60,
		Comparisons: []gate.Comparison{{Name: "GET /slow.php", Verdict: stats.Worse, Gate: gate.Worse, Change: 0.5, Lo: 0.4, Hi: 0.6,
			Level: 0.95, OldUs: 1000, NewUs: 1500, Rounds: 4}}}
	for _, asJSON := range []bool{false, true} {
		dir := t.TempDir()
		var out, errs bytes.Buffer
		f := gateFlags{annotations: true, json: asJSON, junit: filepath.Join(dir, "gate.xml"), markdown: filepath.Join(dir, "gate.md")}
		if err := f.write(&streams{out: &out, err: &errs}, dir, res); err != nil {
			t.Fatal(err)
		}
		annotations, other := &out, &errs
		if asJSON {
			annotations, other = &errs, &out
			if !strings.HasPrefix(out.String(), "{") || !strings.Contains(out.String(), `"outcome": "worse"`) {
				t.Errorf("--json: stdout %q, want result.json", out.String())
			}
		}
		if !strings.Contains(annotations.String(), "::error title=phptune gate%3A GET /slow.php is slower::") ||
			strings.Contains(other.String(), "::error") {
			t.Errorf("json %v: annotations on the wrong stream; stdout:\n%s\nstderr:\n%s", asJSON, out.String(), errs.String())
		}
		for _, name := range []string{"result.json", "gate.xml", "gate.md"} {
			if st, err := os.Stat(filepath.Join(dir, name)); err != nil || st.Size() == 0 {
				t.Errorf("json %v: %s not written: %v", asJSON, name, err)
			}
		}
	}
}
