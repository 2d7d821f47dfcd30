package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/check"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/measure"
	"github.com/phptune/phptune/internal/stack"
	"github.com/phptune/phptune/workloads"
)

// The check tests plant one problem each in a pool phptune starts (nginx in front, as real traffic comes), load it
// through nginx with phptune's own load generator, and run `phptune check` on the pool's file for a few seconds.

// checkStack starts nginx and one php-fpm pool serving app (a directory; the demo app when ""), stopped at the
// end of the test.
func checkStack(t *testing.T, app string, pool stack.Pool, defines map[string]string, writable ...string) *stack.Stack {
	t.Helper()
	return startCheckStack(t, stack.Config{App: app, Pools: []stack.Pool{pool}, Defines: defines, Writable: writable, NginxWorkers: 1})
}

// startCheckStack starts cfg (the demo app when it names none), stopped at the end of the test; nginx passes to
// its first pool.
func startCheckStack(t *testing.T, cfg stack.Config) *stack.Stack {
	t.Helper()
	if cfg.App == "" {
		cfg.AppFS = workloads.Demo()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := stack.Start(ctx, cfg)
	if err != nil {
		t.Fatalf("start stack (needs php8.2-fpm and nginx: make deps): %v", err)
	}
	t.Cleanup(func() { s.Stop(context.Background()) })
	return s
}

// servedDir is a new directory that the workers' user may read, as a docroot must be (tune refuses one it cannot):
// t.TempDir's, and its parent, are closed to others.
func servedDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, p := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// writeApp writes files into a new directory and returns it.
func writeApp(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := servedDir(t)
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// loadFor sends HTTP load through the stack's nginx from now until the test (or stop) ends: conns connections,
// closed loop, or at rate requests/s in all when rate > 0.
func loadFor(t *testing.T, s *stack.Stack, path string, conns int, rate float64) (stop func() *load.Result) {
	t.Helper()
	target, err := load.ParseTarget(s.HTTPURL + strings.TrimPrefix(path, "/"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan *load.Result, 1)
	go func() {
		r, _ := load.Run(ctx, load.Options{Target: target, Connections: conns, Rate: rate, Duration: 10 * time.Minute, Timeout: 20 * time.Second,
			Request: load.Request{Method: "GET", KeepAlive: true}})
		done <- r
	}()
	var once *load.Result
	stopped := false
	stop = func() *load.Result {
		if !stopped {
			stopped = true
			cancel()
			once = <-done
		}
		return once
	}
	t.Cleanup(func() { stop() })
	return stop
}

// checkJSON runs phptune check with args and --json on one pool, and returns its result and exit code.
func checkJSON(t *testing.T, args ...string) (*check.Result, runOut) {
	t.Helper()
	r := phptune(t, append([]string{"check", "--json"}, args...)...)
	return checkResult(t, args, r, []byte(r.stdout), 1), r
}

// checkResult reads data, the JSON that phptune check args wrote with r as its run, holding pools pools.
func checkResult(t *testing.T, args []string, r runOut, data []byte, pools int) *check.Result {
	t.Helper()
	var res check.Result
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatalf("phptune check %v: exit %d, not JSON (%v):\n%s\nstderr:\n%s", args, r.code, err, data, r.stderr)
	}
	if res.Schema != check.Schema || len(res.Pools) != pools {
		t.Fatalf("phptune check %v: %d pool(s), want %d: %+v", args, len(res.Pools), pools, res)
	}
	return &res
}

func findingIDs(p *check.Pool) []string {
	var ids []string
	for _, f := range p.Findings {
		ids = append(ids, f.ID)
	}
	return ids
}

func suggestion(p *check.Pool, setting string) (check.Suggestion, bool) {
	for _, s := range p.Suggestions {
		if s.Setting == setting {
			return s, true
		}
	}
	return check.Suggestion{}, false
}

func confOf(s *stack.Stack) string { return filepath.Join(s.RunDir, "php-fpm.conf") }

// TestCheckPoolTooSmall: a pool of 2 under 8 connections is found at its limit, with a queue, and a larger
// pm.max_children is suggested with the numbers behind it; an idle pool of the same master, read in the same
// check, has nothing wrong. One run gives the summary (stdout) and the result (--out).
func TestCheckPoolTooSmall(t *testing.T) {
	app := writeApp(t, map[string]string{"index.php": "<?php usleep(20000); echo 'ok';\n"})
	s := startCheckStack(t, stack.Config{App: app, NginxWorkers: 1, Pools: []stack.Pool{
		{Name: "small", Listen: stack.ListenUnix, PM: "dynamic", MaxChildren: 2},
		{Name: "idle", Listen: stack.ListenTCP, PM: "static", MaxChildren: 2}}})
	loadFor(t, s, "/index.php", 8, 0)
	time.Sleep(time.Second)
	out := t.TempDir()
	args := []string{"check", confOf(s), "--for", "5s", "--interval", "250ms", "--out", out}
	r := phptune(t, args...)
	data, err := os.ReadFile(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatalf("exit %d: %v\n%s", r.code, err, r.stderr)
	}
	res := checkResult(t, args, r, data, 2)
	p, idle := res.Pools[0], res.Pools[1]
	if p.Name != "small" {
		p, idle = idle, p
	}
	if r.code != 3 || !slices.Contains(findingIDs(p), check.FindMaxChildren) {
		t.Fatalf("exit %d, findings %v; want exit 3 and %s\n%s", r.code, findingIDs(p), check.FindMaxChildren, r.stderr)
	}
	if idle.Name != "idle" || len(idle.Findings) != 0 || len(idle.Suggestions) != 0 || idle.Samples < 8 {
		t.Errorf("the idle pool: %s, %d samples, findings %+v, suggestions %+v", idle.Name, idle.Samples, idle.Findings, idle.Suggestions)
	}
	if p.Busy.Peak != 2 || p.Busy.MaxChildren != 2 || p.Queue.Peak < 3 || p.Queue.NonZero < 0.5 || p.Queue.Source != "kernel" {
		t.Errorf("busy %+v queue %+v: want every worker busy and connections waiting", p.Busy, p.Queue)
	}
	sg, ok := suggestion(p, "pm.max_children")
	if n, _ := strconv.Atoi(sg.Suggested); !ok || sg.Current != "2" || n < 5 || !strings.Contains(sg.Verify, "phptune tune "+s.Docroot) {
		t.Errorf("suggestion %+v", sg)
	}
	// The summary for people: the finding, its evidence and the suggestion, within 120 columns.
	for _, want := range []string{"PROBLEMS", "busy workers: peak 2", "pm.max_children 2 ->", "verify: phptune tune"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, r.stdout)
		}
	}
	for _, line := range strings.Split(r.stdout, "\n") {
		if len(line) > 120 {
			t.Errorf("line of %d columns: %q", len(line), line)
		}
	}
}

// TestCheckOpcacheTooSmall: an app of many files in an opcache of 8 MiB and 200 keys, one of its pages rewriting
// a cached file on every request (a template cache), fills opcache and makes it restart. opcache restarts only
// when no request holds the cache, so the load leaves gaps (an open model at 15 requests/s): under back-to-back
// requests a restart stays pending.
func TestCheckOpcacheTooSmall(t *testing.T) {
	files := map[string]string{}
	for i := 0; i < 300; i++ {
		var b strings.Builder
		fmt.Fprintf(&b, "<?php\nfunction f%d($x) {\n", i)
		for j := 0; j < 60; j++ {
			fmt.Fprintf(&b, "    $x = str_replace('needle%d_%d', 'thread%d_%d', $x . 'padding text %d %d');\n", i, j, i, j, i, j)
		}
		b.WriteString("    return $x;\n}\n")
		files[fmt.Sprintf("lib%03d.php", i)] = b.String()
	}
	files["index.php"] = `<?php
for ($i = 0; $i < 20; $i++) { $n = mt_rand(0, 299); require_once sprintf(__DIR__ . '/lib%03d.php', $n); }
// A template cache rewritten on every request: each copy of it opcache holds is wasted once the next replaces it.
$cache = __DIR__ . '/cache/tpl.php';
file_put_contents($cache . '.tmp', '<?php return ' . var_export(array_fill(0, 10000, str_repeat('v', 40) . mt_rand()), true) . ';');
rename($cache . '.tmp', $cache);
$t = require $cache;
echo 'ok ', count($t);
`
	app := writeApp(t, files)
	os.Mkdir(filepath.Join(app, "cache"), 0o755)
	defines := map[string]string{"opcache.memory_consumption": "8", "opcache.max_accelerated_files": "200", "opcache.interned_strings_buffer": "1",
		"opcache.validate_timestamps": "1", "opcache.revalidate_freq": "0", "opcache.file_update_protection": "0", "opcache.max_wasted_percentage": "1"}
	s := checkStack(t, app, stack.Pool{Name: "opc", Listen: stack.ListenUnix, PM: "static", MaxChildren: 3}, defines, "cache")
	loadFor(t, s, "/index.php", 2, 15)
	time.Sleep(time.Second)
	res, r := checkJSON(t, confOf(s), "--for", "6s", "--interval", "500ms")
	p := res.Pools[0]
	ids := findingIDs(p)
	if r.code != 3 || !slices.Contains(ids, check.FindOpcacheRst) {
		t.Fatalf("exit %d, findings %v; want exit 3 and %s; opcache %+v\n%s", r.code, ids, check.FindOpcacheRst, p.Opcache, r.stderr)
	}
	if p.Opcache.OOMRestarts+p.Opcache.HashRestarts == 0 || p.Opcache.Last.INI["opcache.memory_consumption"] != "8" {
		t.Errorf("opcache %+v", p.Opcache)
	}
	sg, ok := suggestion(p, "opcache.memory_consumption/interned_strings_buffer/max_accelerated_files")
	if !ok || sg.Current != "8/1/200" || !strings.Contains(sg.Verify, "--knob opcache_memory=8/1/200,") {
		t.Errorf("suggestion %+v", sg)
	}
}

// TestCheckFindsALeak: a page that keeps 1 MiB a request (memory the request never frees) makes its workers grow
// by about that much a request, and a pm.max_requests is suggested.
func TestCheckFindsALeak(t *testing.T) {
	app := writeApp(t, map[string]string{"index.php": `<?php
// 1 MiB of the process's own heap, never freed when the request ends.
$p = FFI::new("char[1048576]", false, true);
FFI::memset($p, 1, 1048576);
echo 'ok';
`})
	s := checkStack(t, app, stack.Pool{Name: "leak", Listen: stack.ListenUnix, PM: "static", MaxChildren: 3}, map[string]string{"ffi.enable": "1"})
	loadFor(t, s, "/index.php", 3, 30)
	time.Sleep(500 * time.Millisecond)
	res, r := checkJSON(t, confOf(s), "--for", "6s", "--interval", "250ms")
	p := res.Pools[0]
	if r.code != 3 || !slices.Contains(findingIDs(p), check.FindGrowth) {
		t.Fatalf("exit %d, findings %v; want exit 3 and %s; growth %+v\n%s", r.code, findingIDs(p), check.FindGrowth, p.Growth, r.stderr)
	}
	if g := p.Growth.PerRequest; g < 0.8*(1<<20) || g > 1.3*(1<<20) {
		t.Errorf("growth %.0f bytes a request, want about 1 MiB", g)
	}
	if sg, ok := suggestion(p, "pm.max_requests"); !ok || sg.Current != "0" || !strings.Contains(sg.Verify, "--knob max_requests=0,") {
		t.Errorf("suggestion %+v", sg)
	}
}

// TestCheckMemoryOverCgroupLimit: a pool whose max_children x worker memory exceeds its memory cgroup's limit
// (a real v1 cgroup, the php-fpm master and its workers moved into it, moved out and removed after).
func TestCheckMemoryOverCgroupLimit(t *testing.T) {
	s := checkStack(t, "", stack.Pool{Name: "big", Listen: stack.ListenUnix, PM: "dynamic", MaxChildren: 64}, nil)
	intoCgroup(t, memoryCgroup(t, 96<<20), s.PID("php-fpm"))
	loadFor(t, s, "/articles", 2, 20)
	time.Sleep(time.Second)
	res, r := checkJSON(t, confOf(s), "--for", "3s", "--interval", "250ms")
	p := res.Pools[0]
	if r.code != 3 || !slices.Contains(findingIDs(p), check.FindMemoryLimit) {
		t.Fatalf("exit %d, findings %v; want exit 3 and %s; memory %+v\n%s", r.code, findingIDs(p), check.FindMemoryLimit, p.Memory, r.stderr)
	}
	m := p.Memory
	if m.Limit != 96<<20 || !strings.Contains(m.LimitSource, "cgroup") || m.AtMaxChildren <= m.Budget || m.Fits >= 64 || m.Fits < 1 {
		t.Errorf("memory %+v", m)
	}
	if sg, ok := suggestion(p, "pm.max_children"); !ok || sg.Current != "64" || sg.Suggested != strconv.Itoa(m.Fits) || !strings.Contains(sg.Verify, "--memory") {
		t.Errorf("suggestion %+v", sg)
	}
}

// intoCgroup moves php-fpm's master and workers (its process group) into the cgroup dir.
func intoCgroup(t *testing.T, dir string, master int) {
	t.Helper()
	pids, err := measure.ProcessGroup(master)
	if err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
			t.Fatalf("move %d into the cgroup: %v", pid, err)
		}
	}
}

// TestCheckHealthyPoolChangesNothing: a healthy pool under load gives exit 0 and no finding, run after run,
// whether named by its file, its socket or its name (its settings then found from its running master); and the
// pool is as it was: its configuration, its workers, its socket; check's private directory is gone.
func TestCheckHealthyPoolChangesNothing(t *testing.T) {
	s := checkStack(t, "", stack.Pool{Name: "checkhealthy", Listen: stack.ListenUnix, PM: "static", MaxChildren: 4}, nil)
	loadFor(t, s, "/articles", 2, 40)
	time.Sleep(2 * time.Second)
	before := poolState(t, s)
	ep := s.Pools[0]
	for run, target := range [][]string{{confOf(s)}, {ep.Address, "--fpm-status", ep.StatusPath}, {"checkhealthy"}} {
		res, r := checkJSON(t, append(target, "--for", "3s", "--interval", "250ms")...)
		p := res.Pools[0]
		if r.code != 0 || len(p.Findings) != 0 || len(p.Suggestions) != 0 {
			t.Errorf("run %d (%s): exit %d, findings %+v, suggestions %+v\n%s", run+1, target[0], r.code, p.Findings, p.Suggestions, r.stderr)
		}
		if p.Samples < 8 || p.Traffic.PerSecond < 20 || p.Opcache.Reads < 2 || p.Memory.Workers != 4 || p.Settings.MaxChildren != 4 {
			t.Errorf("run %d (%s): %d samples, %.1f req/s, %d opcache reads, %d workers, max_children %d: not a real look at the pool",
				run+1, target[0], p.Samples, p.Traffic.PerSecond, p.Opcache.Reads, p.Memory.Workers, p.Settings.MaxChildren)
		}
	}
	if after := poolState(t, s); after != before {
		t.Errorf("the pool changed:\nbefore %s\nafter  %s", before, after)
	}
	if left, _ := filepath.Glob("/run/phptune-check-*"); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

// poolState is what must not change: the configuration's bytes and time, the socket's inode, mode and owner, the
// master's and workers' pids.
func poolState(t *testing.T, s *stack.Stack) string {
	t.Helper()
	conf, err := os.ReadFile(confOf(s))
	if err != nil {
		t.Fatal(err)
	}
	cst, _ := os.Stat(confOf(s))
	var sock syscall.Stat_t
	if err := syscall.Stat(s.Pools[0].Address, &sock); err != nil {
		t.Fatal(err)
	}
	pids, err := measure.ProcessGroup(s.PID("php-fpm"))
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("config sha256 %x mtime %s; socket ino %d mode %o uid %d gid %d; pids %v", sha256.Sum256(conf), cst.ModTime(),
		sock.Ino, sock.Mode, sock.Uid, sock.Gid, pids)
}

func TestCheckBadInput(t *testing.T) {
	dir := t.TempDir()
	noStatus := filepath.Join(dir, "www.conf")
	os.WriteFile(noStatus, []byte("[www]\nlisten = "+filepath.Join(dir, "www.sock")+"\npm = static\npm.max_children = 2\n"), 0o644)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{noStatus}, "add pm.status_path = /status to [www] in " + noStatus},
		{[]string{"unix:" + filepath.Join(dir, "none.sock")}, "nothing listens there"},
		{[]string{"tcp:127.0.0.1:1"}, "nothing listens there"},
		{[]string{"tcp:nonsense"}, "want tcp:HOST:PORT"},
		{[]string{filepath.Join(dir, "missing.conf")}, "no such file"},
		{[]string{"tcp:127.0.0.1:1", "--for", "1s", "--interval", "2s"}, "longer than --for"},
		{[]string{"tcp:127.0.0.1:1", "--fpm-status", "status"}, "--fpm-status \"status\": want a path starting with /"},
	}
	for _, c := range cases {
		r := phptune(t, append([]string{"check"}, c.args...)...)
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		if r.code != 2 || !strings.Contains(r.stderr, c.want) || len(lines) != 1 {
			t.Errorf("phptune check %v: exit %d, stderr %q; want exit 2 and one line containing %q", c.args, r.code, r.stderr, c.want)
		}
	}
	// The old name still works, saying the new one: bench and check name the status page alike.
	if r := phptune(t, "check", "tcp:127.0.0.1:1", "--status-path", "status"); r.code != 2 || !strings.Contains(r.stderr, "use --fpm-status") ||
		!strings.Contains(r.stderr, "want a path starting with /") {
		t.Errorf("check --status-path: exit %d, stderr %q; want it read as --fpm-status, with a notice", r.code, r.stderr)
	}
}

// TestCheckInterruptKeepsWhatItSampled: Ctrl-C ends the sampling early; the result and report are written,
// marked partial, exit 130, and the opcache script's directory is gone.
func TestCheckInterruptKeepsWhatItSampled(t *testing.T) {
	s := checkStack(t, "", stack.Pool{Name: "int", Listen: stack.ListenUnix, PM: "static", MaxChildren: 2}, nil)
	loadFor(t, s, "/articles", 1, 20)
	out := t.TempDir()
	// Ctrl-C once the pool has 3 samples, which the result must keep; --for 60s outlasts any wait for them.
	samples := regexp.MustCompile(`int: ([0-9]+) samples`)
	sampled := func(se string) bool {
		m := samples.FindAllStringSubmatch(se, -1)
		n := 0
		if len(m) > 0 {
			n, _ = strconv.Atoi(m[len(m)-1][1])
		}
		return n >= 3
	}
	so := interrupted(t, "3 samples", sampled, 3*time.Second, "check", confOf(s), "--for", "60s", "--interval", "250ms", "--out", out)
	var res check.Result
	data, err := os.ReadFile(filepath.Join(out, "result.json"))
	if err != nil || json.Unmarshal(data, &res) != nil || !res.Partial || len(res.Pools) != 1 || res.Pools[0].Samples < 3 {
		t.Fatalf("result.json: %v %.300s", err, data)
	}
	page, err := os.ReadFile(filepath.Join(out, "report.html"))
	if err != nil || !strings.Contains(string(page), `id="partial"`) || !strings.Contains(string(page), `data-chart="busy-0"`) {
		t.Errorf("report.html: %v", err)
	}
	if !strings.Contains(so, "PARTIAL") {
		t.Errorf("summary does not say partial:\n%s", so)
	}
	if left, _ := filepath.Glob("/run/phptune-check-*"); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}
