package profile

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"
	"time"

	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/stack"
)

// multiFileApp writes a front controller that autoloads n classes, one file each: the shape of a framework's
// hello-world, where opcache off means opening, reading and compiling every file on every request. Its output
// does not depend on the clock, so its instruction count is exact.
func multiFileApp(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	idx := fmt.Sprintf(`<?php
spl_autoload_register(function ($c) { require __DIR__ . '/lib/' . $c . '.php'; });
$sum = 0;
for ($i = 0; $i < %d; $i++) { $cls = "C$i"; $sum += (new $cls)->run($i); }
echo "ok $sum\n";
`, n)
	if err := os.WriteFile(filepath.Join(dir, "index.php"), []byte(idx), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		src := fmt.Sprintf(`<?php
final class C%d
{
    private array $seen = [];

    public function run(int $x): int
    {
        for ($j = 0; $j < 10; $j++) {
            $this->seen[] = $j * $x;
        }
        return array_sum($this->seen) + strlen(str_repeat('x', %d));
    }
}
`, i, i)
		if err := os.WriteFile(filepath.Join(dir, "lib", "C"+strconv.Itoa(i)+".php"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func variant(t *testing.T, name string, sets ...string) Variant {
	t.Helper()
	c := knob.Debian()
	c.PM, c.MaxChildren = "static", 2
	for _, kv := range sets {
		k, v, _ := strings.Cut(kv, "=")
		kn, err := knob.Fixed(k, []string{v})
		if err != nil {
			t.Fatal(err)
		}
		if err := kn.Set(&c, v); err != nil {
			t.Fatal(err)
		}
	}
	return Variant{Name: name, Config: c}
}

// TestOpcacheOffVsOn is the classic case: with opcache off every request opens, stats and reads every file.
func TestOpcacheOffVsOn(t *testing.T) {
	app := multiFileApp(t, 40)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	becomeSubreaper(t)
	res, err := Run(ctx, Options{
		Stack:    stack.Config{App: app},
		AppName:  app,
		URLs:     []load.MixItem{{URI: "/", Weight: 1}},
		Variants: []Variant{variant(t, "baseline"), variant(t, "opcache=off", "opcache=off")},
		Requests: 100, InstrWarmup: 1, InstrN: 1, Functions: 10,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Variants) != 2 || res.Schema != Schema {
		t.Fatalf("got %d variants, schema %q", len(res.Variants), res.Schema)
	}
	on, off := res.Variants[0], res.Variants[1]
	for _, v := range res.Variants {
		if v.Error != "" {
			t.Fatalf("%s: %s", v.Name, v.Error)
		}
		t.Logf("%s: %.1f syscalls/req (openat %.1f), %.0f instructions/req, mean PSS %d KiB, USS %d KiB",
			v.Name, v.SyscallsPerReq, v.Syscalls["openat"], v.InstructionsPerReq, v.MeanPSS>>10, v.MeanUSS>>10)
		if v.TracedRequests != 100 || v.FailedRequests != 0 {
			t.Errorf("%s: traced %d requests, %d failed", v.Name, v.TracedRequests, v.FailedRequests)
		}
		if len(v.Workers) != 2 || v.MeanPSS <= 0 || v.MeanUSS <= 0 {
			t.Errorf("%s: workers %+v", v.Name, v.Workers)
		}
		if v.HugePages == nil || v.HugePages.TextBytes <= 0 {
			t.Errorf("%s: huge pages %+v", v.Name, v.HugePages)
		}
	}
	if on.SyscallsPerReq <= 0 || off.SyscallsPerReq < 3*on.SyscallsPerReq {
		t.Errorf("syscalls per request: opcache off %.1f, on %.1f: want off at least 3x on", off.SyscallsPerReq, on.SyscallsPerReq)
	}
	// Each of the 40 files is opened on every request with opcache off; with it on, none is.
	if off.Syscalls["openat"] < 40 || on.Syscalls["openat"] >= 1 {
		t.Errorf("openat per request: off %.2f (want >= 40), on %.2f (want < 1)", off.Syscalls["openat"], on.Syscalls["openat"])
	}
	if off.InstructionsPerReq <= on.InstructionsPerReq*1.2 {
		t.Errorf("instructions per request: off %.0f, on %.0f: want off clearly above on", off.InstructionsPerReq, on.InstructionsPerReq)
	}
	if len(on.Instructions) != 1 || len(on.Instructions[0].Functions) == 0 {
		t.Errorf("want the top functions of the baseline: %+v", on.Instructions)
	}
	if on.Opcache == nil || !on.Opcache.Enabled || on.Opcache.CachedScripts < 41 || on.Opcache.Hits == 0 {
		t.Errorf("opcache on: %+v", on.Opcache)
	}
	if off.Opcache == nil || off.Opcache.Enabled {
		t.Errorf("opcache off: %+v", off.Opcache)
	}
	// Nothing is left: no worker, no strace, no valgrind.
	if left := leftChildren(t); len(left) > 0 {
		t.Errorf("processes left behind: %v", left)
	}
}

// TestVariantFailureKeepsTheOthers: a variant whose php-fpm cannot start carries its error, the next is measured.
func TestVariantFailureKeepsTheOthers(t *testing.T) {
	app := multiFileApp(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	bad := variant(t, "bad")
	bad.Config.PM = "bogus"
	res, err := Run(ctx, Options{Stack: stack.Config{App: app}, Variants: []Variant{bad, variant(t, "good")},
		Requests: 20, NoInstructions: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Variants[0].Error == "" || !strings.Contains(res.Variants[0].Error, "bogus") {
		t.Errorf("bad variant: error %q", res.Variants[0].Error)
	}
	if res.Variants[1].Error != "" || res.Variants[1].SyscallsPerReq <= 0 {
		t.Errorf("good variant: %+v", res.Variants[1])
	}
	if res.Failed() != 1 {
		t.Errorf("Failed() = %d", res.Failed())
	}
}

// TestRecyclingPool: a pool whose workers exit every 20 requests is profiled whole: workers that exit before
// strace reaches them are let go, their successors followed, and the counts divided by the requests strace saw.
// The warm-up brings the workers to their last requests just as strace attaches, which is when it used to fail.
func TestRecyclingPool(t *testing.T) { profileRecycling(t, 0) }

// TestRecyclingPoolBesideABusyLoop: the same beside a busy loop on one core (a test build's load), where a worker
// takes longer to exit and its successor to be forked than strace to attach: the held-out case failed there with
// "strace attached to 1 of 3 processes in 10 s: ptrace(PTRACE_SEIZE, ...): No such process".
func TestRecyclingPoolBesideABusyLoop(t *testing.T) {
	busy := exec.Command("taskset", "-c", "0", "sh", "-c", "while :; do :; done")
	if err := busy.Start(); err != nil {
		t.Fatalf("start the busy loop: %v", err)
	}
	defer func() { busy.Process.Kill(); busy.Wait() }()
	profileRecycling(t, busy.Process.Pid)
}

// profileRecycling profiles a pool without recycling and three that recycle every 20 requests, and checks that
// each is traced whole and nothing is left running but the test's own process keep.
func profileRecycling(t *testing.T, keep int) {
	app := multiFileApp(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	becomeSubreaper(t)
	vs := []Variant{variant(t, "baseline")}
	for i := 0; i < 3; i++ {
		vs = append(vs, variant(t, fmt.Sprintf("recycling %d", i+1), "max_requests=20"))
	}
	res, err := Run(ctx, Options{Stack: stack.Config{App: app}, Variants: vs, Requests: 200, Warmup: 39, NoInstructions: true})
	if err != nil {
		t.Fatal(err)
	}
	base := res.Variants[0]
	for _, v := range res.Variants {
		if v.Error != "" {
			t.Fatalf("%s: %s", v.Name, v.Error)
		}
		t.Logf("%s: %.1f syscalls/req over %d requests, %d processes traced", v.Name, v.SyscallsPerReq, v.TracedRequests, v.TracedProcesses)
		if v.TracedRequests != 200 || v.FailedRequests != 0 {
			t.Errorf("%s: traced %d requests, %d failed", v.Name, v.TracedRequests, v.FailedRequests)
		}
	}
	for _, v := range res.Variants[1:] {
		// 200 requests over workers of 20 each: about ten new workers, each followed from its fork.
		if v.TracedProcesses < 8 {
			t.Errorf("%s: %d processes traced: want the recycled workers' successors followed", v.Name, v.TracedProcesses)
		}
		// A new worker's start-up is counted too, but spread over its 20 requests it stays within a few times
		// the long-lived workers' count.
		if v.SyscallsPerReq < base.SyscallsPerReq || v.SyscallsPerReq > 5*base.SyscallsPerReq {
			t.Errorf("%s: %.1f syscalls/req against %.1f without recycling", v.Name, v.SyscallsPerReq, base.SyscallsPerReq)
		}
	}
	if left := slices.DeleteFunc(leftChildren(t), func(l string) bool { return strings.HasPrefix(l, fmt.Sprintf("%d ", keep)) }); len(left) > 0 {
		t.Errorf("processes left behind: %v", left)
	}
}

// becomeSubreaper makes this test process adopt its orphaned descendants, so that anything a run leaves behind
// (a worker whose master died, a strace, a valgrind) shows up as a child of ours whatever else runs on the machine.
func becomeSubreaper(t *testing.T) {
	t.Helper()
	const prSetChildSubreaper = 36
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		t.Fatalf("prctl(PR_SET_CHILD_SUBREAPER): %v", errno)
	}
}

// leftChildren lists this process's live children (zombies are reaped first), with their commands.
func leftChildren(t *testing.T) []string {
	t.Helper()
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if err != nil || pid <= 0 {
			break
		}
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 2 && f[2] == strconv.Itoa(os.Getpid()) && f[0] != "Z" {
			out = append(out, fmt.Sprintf("%d %s", pid, s[:strings.LastIndexByte(s, ')')+1]))
		}
	}
	return out
}

// TestWallTimeShowsWaiting: excimer's wall clock sees a sleep that the CPU clock does not.
func TestWallTimeShowsWaiting(t *testing.T) {
	dir := t.TempDir()
	// compute spans several kernel ticks a request: the CPU timer behind excimer's CPU samples fires on ticks
	// (4 ms at 250 Hz), so a sub-millisecond function can go unsampled in 30 requests.
	idx := `<?php
function waitForRemote() { usleep(20000); }
function compute() { $s = 0; for ($i = 0; $i < 3000000; $i++) { $s += $i % 7; } return $s; }
waitForRemote();
echo compute(), "\n";
`
	if err := os.WriteFile(filepath.Join(dir, "index.php"), []byte(idx), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := Run(ctx, Options{Stack: stack.Config{App: dir}, Variants: []Variant{variant(t, "baseline")},
		Requests: 30, Warmup: 1, NoSyscalls: true, NoInstructions: true, Wall: true})
	if err != nil {
		t.Fatal(err)
	}
	v := res.Variants[0]
	if v.Error != "" || v.Wall == nil {
		t.Fatalf("variant: %+v", v)
	}
	fns := map[string]WallFunc{}
	for _, f := range v.Wall.Functions {
		fns[f.Name] = f
	}
	t.Logf("wall %.2f ms, CPU %.2f ms a request; waitForRemote %+v, compute %+v", v.Wall.WallMs, v.Wall.CPUMs, fns["waitForRemote"], fns["compute"])
	w, c := fns["waitForRemote"], fns["compute"]
	if w.WallMs < 15 || w.CPUMs > 2 {
		t.Errorf("waitForRemote: %.2f ms wall, %.2f ms CPU: want about 20 ms of wall time and next to no CPU", w.WallMs, w.CPUMs)
	}
	if c.CPUMs <= 0 || c.WallMs <= 0 {
		t.Errorf("compute: %+v: want CPU time", c)
	}
	if _, ok := fns["index.php"]; !ok {
		t.Errorf("the front controller's frame should be named relative to the docroot: %+v", v.Wall.Functions)
	}
}

// TestSlowlogCatchesASlowRequest: php-fpm's slowlog, in the untraced run, names the function that waited.
func TestSlowlogCatchesASlowRequest(t *testing.T) {
	dir := t.TempDir()
	idx := "<?php\nfunction slowRemoteCall() { usleep(1300000); }\nslowRemoteCall();\necho \"done\\n\";\n"
	if err := os.WriteFile(filepath.Join(dir, "index.php"), []byte(idx), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := Run(ctx, Options{Stack: stack.Config{App: dir}, Variants: []Variant{variant(t, "baseline")},
		Requests: 2, Warmup: 1, NoSyscalls: true, NoInstructions: true, Slowlog: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	v := res.Variants[0]
	if v.Error != "" || v.Slowlog == nil {
		t.Fatalf("variant: %+v", v)
	}
	// php-fpm checks for slow requests on its heartbeat, so it may miss one of two requests just over the limit;
	// and on a busy machine it may catch one as it ends, with no frames left to show: one trace must name it.
	named := false
	for _, tr := range v.Slowlog.Traces {
		named = named || strings.Contains(tr, "slowRemoteCall() index.php:3")
	}
	if v.Slowlog.Entries < 1 || v.Slowlog.Entries > 2 || !named {
		t.Errorf("slowlog: %+v", v.Slowlog)
	}
}

// TestScreenInstructions counts with php-cgi alone, for an app in place and an embedded one.
func TestScreenInstructions(t *testing.T) {
	app := multiFileApp(t, 10)
	// Date the files back as a user's app would be: opcache does not cache files younger than 2 s.
	old := time.Now().Add(-time.Hour)
	filepath.WalkDir(app, func(p string, d fs.DirEntry, err error) error { return os.Chtimes(p, old, old) })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	o := Options{Stack: stack.Config{App: app}, InstrWarmup: 1, InstrN: 1}
	// One configuration is enough here: opcache on against off is TestOpcacheOffVsOn's.
	off, byURL, err := ScreenInstructions(ctx, o, variant(t, "off", "opcache=off").Config)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("instructions per request, opcache off: %.0f", off)
	if len(byURL) != 1 || byURL[0].URI != "/" || off <= 0 || byURL[0].N != 1 {
		t.Errorf("off %.0f (%+v)", off, byURL)
	}
	embedded := fstest.MapFS{"index.php": {Data: []byte("<?php echo strtoupper($_SERVER['REQUEST_URI']), \"\\n\";\n")}}
	n, _, err := ScreenInstructions(ctx, Options{Stack: stack.Config{AppFS: embedded}, URLs: []load.MixItem{{URI: "/a?x=1"}}, InstrWarmup: 1, InstrN: 1}, knob.Debian())
	if err != nil || n <= 0 {
		t.Errorf("embedded app: %.0f, %v", n, err)
	}
}

// TestPostBodyReachesBothSAPIs: a POST's body goes to php-fpm over FastCGI and to php-cgi on its stdin, once per
// request of -T.
func TestPostBodyReachesBothSAPIs(t *testing.T) {
	dir := t.TempDir()
	idx := `<?php
$b = file_get_contents('php://input');
if ($b !== 'a=1&b=hello' || ($_POST['b'] ?? '') !== 'hello') { http_response_code(500); trigger_error("body was [$b]", E_USER_ERROR); }
echo "ok\n";
`
	if err := os.WriteFile(filepath.Join(dir, "index.php"), []byte(idx), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req := load.Request{Method: "POST", Body: []byte("a=1&b=hello"), Headers: [][2]string{{"Content-Type", "application/x-www-form-urlencoded"}}}
	res, err := Run(ctx, Options{Stack: stack.Config{App: dir}, Variants: []Variant{variant(t, "baseline")}, Request: req,
		Requests: 3, Warmup: 1, NoSyscalls: true, InstrWarmup: 1, InstrN: 1})
	if err != nil {
		t.Fatal(err)
	}
	if v := res.Variants[0]; v.Error != "" || v.InstructionsPerReq <= 0 {
		t.Errorf("variant: %+v", v)
	}
}
