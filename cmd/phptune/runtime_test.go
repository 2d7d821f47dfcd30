package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/tune"
)

// TestTuneSizesRuntimesFairly plants the unfair comparison of published benchmarks: Apache's prefork + mod_php
// at its 150 workers (read with --from-apache) against php-fpm at Debian's 5. One page takes 8 MiB a request:
// tune sizes both runtimes by the one rule, each with its own measured memory within --memory, races them at
// those sizes, and compares the pick with the 150-worker starting point. The budget is about the least that leaves
// the server race its rounds beside the pool's size (at 30 s it was not tried; at 45 s it ran 4 rounds).
func TestTuneSizesRuntimesFairly(t *testing.T) {
	app := servedDir(t)
	os.WriteFile(filepath.Join(app, "index.php"), []byte(`<?php
if (isset($_GET['big'])) { $b = str_repeat("x", 8 << 20); echo strlen($b); } else { echo "small"; }`), 0o644)
	conf := filepath.Join(t.TempDir(), "apache2.conf")
	os.WriteFile(conf, []byte("LoadModule mpm_prefork_module /usr/lib/apache2/modules/mod_mpm_prefork.so\n"+
		"LoadModule php_module /usr/lib/apache2/modules/libphp8.2.so\n<IfModule mpm_prefork_module>\n"+
		"  StartServers 5\n  MinSpareServers 5\n  MaxSpareServers 10\n  MaxRequestWorkers 150\n</IfModule>\n"+
		"php_admin_value memory_limit 128M\n"), 0o644)
	out := t.TempDir()
	r := phptune(t, "tune", app, "--verbose", "--url", "/?big", "--url", "/?a=1=3", "--from-apache", conf, "--knob", "server=apache-modphp,nginx-fpm",
		"--only", "server", "--memory", "256MiB", "--budget", "50s", "--out", out)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	t.Logf("\n%s", r.stdout)
	data, _ := os.ReadFile(filepath.Join(out, "result.json"))
	var res struct {
		Baseline       knob.Config    `json:"baseline"`
		Recommendation knob.Config    `json:"recommendation"`
		PoolSize       *tune.PoolSize `json:"pool_size"`
		Runtimes       *tune.Runtimes `json:"runtimes"`
	}
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatal(err)
	}
	if b := res.Baseline; b.Server != knob.ApacheModPHP || b.MaxChildren != 150 || b.INI["memory_limit"] != "128M" {
		t.Errorf("starting point %s: want prefork + mod_php at 150 from --from-apache", b)
	}
	rt := res.Runtimes
	if rt == nil || len(rt.List) != 2 || res.PoolSize == nil {
		t.Fatalf("runtimes %+v, pool size %+v: want both runtimes raced, and the pool's size", rt, res.PoolSize)
	}
	sizes := map[string]int{}
	for _, x := range rt.List {
		sizes[x.Server] = x.Size
		// The rule: the target, or what the memory holds at this runtime's own figures when fewer.
		want := rt.Target
		if x.MemoryLimit > 0 && x.MemoryLimit < want {
			want = x.MemoryLimit
		}
		if x.Size != want || x.Size == 150 || x.Size < 1 {
			t.Errorf("%s raced at %d workers: want %d (target %d, memory holds %d)", x.Server, x.Size, want, rt.Target, x.MemoryLimit)
		}
		if x.PerWorkerBytes < 8<<20 || x.Rounds == 0 {
			t.Errorf("%s: %d MiB a worker in %d rounds: the 8 MiB page was not seen in its race", x.Server, x.PerWorkerBytes>>20, x.Rounds)
		}
		if x.TotalBytes > rt.Memory+rt.Memory/4 {
			t.Errorf("%s at %d workers takes %d MiB, beyond the %d MiB given", x.Server, x.Size, x.TotalBytes>>20, rt.Memory>>20)
		}
	}
	if sizes[knob.ApacheModPHP] == 0 || sizes[knob.NginxFPM] == 0 {
		t.Errorf("sizes %v: want both runtimes", sizes)
	}
	// The incumbent runtime keeps the pool's starting size: the runtimes race before the sizes, by the same rule.
	if sizes[knob.ApacheModPHP] != res.PoolSize.Initial {
		t.Errorf("prefork raced at %d, the pool's starting size was %d", sizes[knob.ApacheModPHP], res.PoolSize.Initial)
	}
	if !strings.Contains(r.stdout, "Runtimes") || !strings.Contains(r.stdout, "apache-modphp") {
		t.Errorf("the summary does not show the runtimes side by side:\n%s", r.stdout)
	}
	want := "php-fpm-pool.conf"
	if res.Recommendation.Server == knob.ApacheModPHP {
		want = "apache-mpm.conf"
	}
	if _, err := os.Stat(filepath.Join(out, want)); err != nil {
		t.Errorf("recommendation %s: no %s (%v)", res.Recommendation, want, err)
	}
}

// TestServeRecommendationAndCompare: a tune run's recommendation served in its runtime (here Apache's prefork
// with mod_php, with its size and settings) beside another server (nginx + php-fpm, as a FrankenPHP phptune
// cannot start would be), the two compared by compare --interleave on the same mix; Ctrl-C then leaves no
// Apache process.
func TestServeRecommendationAndCompare(t *testing.T) {
	rec := knob.Debian()
	rec.Server, rec.PM, rec.MaxChildren = knob.ApacheModPHP, "static", 2
	rec.SetINI("memory_limit", "64M")
	data, _ := json.Marshal(map[string]any{"schema": tune.Schema, "recommendation": rec})
	path := filepath.Join(t.TempDir(), "result.json")
	os.WriteFile(path, data, 0o644)
	runDir := filepath.Join(t.TempDir(), "run")
	apache, a, stderr := startServe(t, "--recommendation", path, "--out", runDir)
	conf, err := os.ReadFile(filepath.Join(runDir, "apache.conf"))
	if err != nil || !strings.Contains(string(conf), "MaxRequestWorkers 2\n") || !strings.Contains(string(conf), "php_admin_value memory_limit 64M") {
		t.Fatalf("apache.conf (%v) does not run the recommendation:\n%s", err, conf)
	}
	_, other, _ := startServe(t)
	r := phptune(t, "compare", "--interleave", a.HTTP, other.HTTP, "--url", "/articles", "--url", "/articles/7",
		"--expect-body", "phptune-demo", "--rounds", "4", "-c", "2", "-d", "300ms", "--warmup", "100ms", "--json")
	if r.code != 0 && r.code != 3 {
		t.Fatalf("compare: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var cmp struct {
		Paired bool `json:"paired"`
		Arms   []struct {
			Trials           int
			Requests, Errors int64
		} `json:"arms"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &cmp); err != nil || len(cmp.Arms) != 2 || !cmp.Paired {
		t.Fatalf("compare --json: %v, %d arms, paired %v\n%.500s", err, len(cmp.Arms), cmp.Paired, r.stdout)
	}
	for i, arm := range cmp.Arms {
		if arm.Trials < 2 || arm.Requests == 0 || arm.Errors != 0 {
			t.Errorf("arm %d: %+v", i, arm)
		}
	}
	apache.Process.Signal(syscall.SIGINT)
	if err := apache.Wait(); err == nil {
		t.Errorf("serve after SIGINT: exit 0, want 130; %s", stderr.String())
	}
	if left := processesMentioning(runDir); len(left) > 0 {
		t.Errorf("Apache processes left after SIGINT: %v", left)
	}
}

// TestTuneKeepsTheRuntimeWithTheBetterTail plants issue 53's trade with the app itself: under php-fpm a request
// burns 4 ms of CPU, under mod_php none, but one in fifty sleeps 200 ms there, so prefork serves more requests a
// second (a pool of 4 at the knee's few connections) at a p99 several times php-fpm's. The server race's guard
// takes mod_php out for its p99, nginx + php-fpm is kept, and the summary's first lines say what was traded.
func TestTuneKeepsTheRuntimeWithTheBetterTail(t *testing.T) {
	app := servedDir(t)
	os.WriteFile(filepath.Join(app, "index.php"), []byte(`<?php
if (PHP_SAPI === 'apache2handler') {
	if (mt_rand(1, 50) === 1) { usleep(200000); }
	echo "ok";
	return;
}
$x = 0;
for ($i = 0; $i < 400000; $i++) { $x += $i; }
echo "ok $x";`), 0o644)
	out := t.TempDir()
	r := phptune(t, "tune", app, "--knob", "server=nginx-fpm,apache-modphp", "--knob", "max_children=4", "--only", "server",
		"--budget", "90s", "--out", out)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	t.Logf("\n%s", r.stdout)
	data, _ := os.ReadFile(filepath.Join(out, "result.json"))
	var res struct {
		Recommendation knob.Config    `json:"recommendation"`
		Runtimes       *tune.Runtimes `json:"runtimes"`
		Knobs          []tune.KnobRow `json:"knobs"`
	}
	if err := json.Unmarshal(data, &res); err != nil || res.Runtimes == nil {
		t.Fatalf("result.json: %v, runtimes %+v", err, res.Runtimes)
	}
	if res.Recommendation.Server != "" {
		t.Errorf("recommended %s: want nginx + php-fpm kept", res.Recommendation)
	}
	for _, rt := range res.Runtimes.List {
		t.Logf("%s: %.0f req/s, p50 %.1f ms, p99 %.1f ms, %s %q", rt.Server, rt.RPS, rt.P50Us/1000, rt.P99Us/1000, rt.Status, rt.Note)
		if rt.Server != knob.ApacheModPHP {
			continue
		}
		if rt.Status != "dropped" || !strings.HasPrefix(rt.Note, "p99 ") || rt.P99Vs == nil {
			t.Errorf("mod_php: %s, %q, p99 %+v: want it out of the race for its p99", rt.Status, rt.Note, rt.P99Vs)
		}
		if rt.Vs != nil && rt.Vs.Estimate > 0 && !strings.Contains(r.stdout, "Not taken for its p99: server apache-modphp +") {
			t.Errorf("mod_php %+.1f%% req/s, not taken for its p99, and the summary does not say so", 100*rt.Vs.Estimate)
		}
	}
}
