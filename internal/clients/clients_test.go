package clients

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/experiment"
)

// These tests start real tarantool and redis-server processes (Debian packages tarantool, redis-server) and
// run the embedded PHP runner with php -n (php8.2-cli, php8.2-msgpack).

func newPHP(t *testing.T) *PHP {
	t.Helper()
	p, err := NewPHP(context.Background(), "php")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func startServer(t *testing.T, kind string) *Server {
	t.Helper()
	s, err := Start(context.Background(), kind, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// TestCodecs runs the PHP codec tests: IPROTO and RESP framing against hand-written bytes, replies cut at every
// byte, a reply split across reads on a real socket (inside Fibers and blocking), and the operations' checks
// rejecting wrong answers.
func TestCodecs(t *testing.T) {
	out, err := exec.Command("php", "-n", "-d", "extension=msgpack", "testdata/codec_test.php",
		filepath.Join("..", "..", "php", "lib.php")).CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "ok ") {
		t.Fatalf("codec tests: %v\n%s", err, out)
	}
	if n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(string(out), "ok "))); n < 80 {
		t.Fatalf("only %d checks ran: %s", n, out)
	}
}

// TestEveryModelChecksAnswers runs every model briefly against real servers with the "check" operation (a
// select returns the tuple inserted, an update changed it, a delete removed it; SET, GET, INCR, DEL on Redis),
// then each operation once in sync (every reply is checked inside the runner).
func TestEveryModelChecksAnswers(t *testing.T) {
	php := newPHP(t)
	if !php.Pcntl {
		t.Fatal("php -n has no pcntl: the processes models cannot run")
	}
	models := []Arm{
		{Model: ModelSync}, {Model: ModelFibers, Fibers: 4}, {Model: ModelProcesses, Procs: 2},
		{Model: ModelProcFibers, Procs: 2, Fibers: 3}, {Model: ModelPipeline, Depth: 5},
	}
	for _, kind := range []string{Tarantool, Redis} {
		srv := startServer(t, kind)
		clients := []string{ClientOurs}
		if kind == Redis && php.Phpredis {
			clients = append(clients, ClientPhpredis)
		}
		for _, client := range clients {
			for _, m := range models {
				a := m
				a.Target, a.Op, a.Client = kind, "check", client
				if client == ClientPhpredis && (a.Model == ModelFibers || a.Model == ModelProcFibers) {
					continue
				}
				s, err := php.Iterate(context.Background(), srv, a, 60, 6, 1)
				if err != nil {
					t.Fatalf("%s %s: %v", kind, a.Label(), err)
				}
				if s.Ops != 60 || s.Seconds <= 0 || s.CPUSeconds <= 0 {
					t.Errorf("%s %s: implausible sample %+v", kind, a.Label(), s)
				}
			}
		}
		for _, op := range Ops[kind] {
			if op == "check" {
				continue
			}
			a := Arm{Target: kind, Op: op, Model: ModelSync, Client: ClientOurs}
			if _, err := php.Iterate(context.Background(), srv, a, 5, 0, 1); err != nil {
				t.Errorf("%s %s: %v", kind, op, err)
			}
		}
	}
}

// TestFibersOverlap: 25 Fibers each calling a server-side function that sleeps 10 ms finish in under 5 times
// one call's time; 25 calls in a row take at least 25 times 10 ms (the sleep is real).
func TestFibersOverlap(t *testing.T) {
	php := newPHP(t)
	srv := startServer(t, Tarantool)
	ctx := context.Background()
	one := time.Hour
	for i := 0; i < 3; i++ {
		s, err := php.Iterate(ctx, srv, Arm{Target: Tarantool, Op: "sleep", Model: ModelSync, Client: ClientOurs}, 1, 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		one = min(one, time.Duration(s.Seconds*1e9))
	}
	if one < 10*time.Millisecond {
		t.Fatalf("one call took %s, less than its 10 ms sleep", one)
	}
	serial, err := php.Iterate(ctx, srv, Arm{Target: Tarantool, Op: "sleep", Model: ModelSync, Client: ClientOurs}, 25, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if serial.Seconds < 0.25 {
		t.Fatalf("25 calls in a row took %.3fs, less than 25 x 10 ms", serial.Seconds)
	}
	// The best of 3 for both: overlap is a property of the code, and a busy machine only adds time.
	took := time.Hour
	for i := 0; i < 3; i++ {
		fib, err := php.Iterate(ctx, srv, Arm{Target: Tarantool, Op: "sleep", Model: ModelFibers, Fibers: 25, Client: ClientOurs}, 25, 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		took = min(took, time.Duration(fib.Seconds*1e9))
	}
	t.Logf("one call %s; 25 in a row %.3fs; 25 Fibers %s", one, serial.Seconds, took)
	if took >= 5*one {
		t.Fatalf("25 Fibers took %s, not under 5 x one call (%s): they did not overlap", took, one)
	}
}

// TestRunReportsEveryModelAndKeepsGoingAfterACrash runs the whole experiment briefly on both servers, then an
// arm that crashes beside healthy ones.
func TestRunReportsEveryModelAndKeepsGoingAfterACrash(t *testing.T) {
	php := newPHP(t)
	cfg := Config{Targets: []string{Tarantool, Redis}, Ops: map[string][]string{Tarantool: {"select"}, Redis: {"get"}},
		Models: Models, Revs: 200, Iterations: 2, Warmup: 20, Fibers: []int{2, 5}, Procs: []int{2}, Depths: []int{4, 8},
		// A tiny retry threshold: two iterations always deviate from their mean, so every arm retries to the limit.
		SweepIterations: 1, SweepRevs: 100, Phpredis: true, RetryThreshold: 1e-6, RetryLimit: 2, Neighbours: true}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	var out Outcome
	if err := Run(context.Background(), cfg, php, &out); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	fibers, best := map[string]int{}, map[string]int{}
	for _, r := range out.Results {
		key := r.Target + " " + r.Model + " " + r.Client
		seen[key] = true
		if r.Model == ModelFibers {
			fibers[r.Target]++
			if r.Best {
				best[r.Target]++
			}
		}
		if r.Error != "" {
			t.Errorf("%s: %s", key, r.Error)
		}
		if !r.Available {
			if !strings.HasPrefix(r.Note, "not available here") || r.OpsPerS != nil {
				t.Errorf("%s: unavailable row %+v", key, r)
			}
			continue
		}
		// A neighbour the race did not pick has its own figures but no comparison with sync.
		picked := r.Best && !strings.HasPrefix(r.Note, "not picked")
		if r.OpsPerS == nil || *r.OpsPerS <= 0 || r.Iterations != 2 || (r.Speedup == nil) == picked {
			t.Errorf("%s: incomplete row %+v", key, r)
		}
		if picked && r.Model != ModelSync && (r.Comparison == nil || r.Comparison.Method != "confidence-sequence") {
			t.Errorf("%s: no comparison with sync on the engine: %+v", key, r.Comparison)
		}
		if r.Retries != 2 {
			t.Errorf("%s: %d retries, want the limit, 2", key, r.Retries)
		}
	}
	for _, target := range []string{Tarantool, Redis} {
		for _, m := range append(Models, ModelSwoole, ModelParallel) {
			if !seen[target+" "+m+" "+ClientOurs] {
				t.Errorf("no %s row for %s", m, target)
			}
		}
	}
	for _, target := range []string{Tarantool, Redis} {
		// The pick and its neighbour (2 and 5 Fibers) re-measured; one of them the best.
		if fibers[target] != 2 || best[target] != 1 {
			t.Errorf("%s: %d fibers rows, %d marked best", target, fibers[target], best[target])
		}
	}
	if php.Phpredis && !seen["redis sync phpredis"] {
		t.Error("no phpredis baseline row")
	}
	if len(out.Sweeps) == 0 || len(out.Ceilings) != 2 {
		t.Errorf("sweeps %d, ceilings %d", len(out.Sweeps), len(out.Ceilings))
	}
	rep := Report{Schema: Schema, Outcome: out}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Schema  string
		Results []map[string]any
	}
	if err := json.Unmarshal(b, &back); err != nil || back.Schema != "phptune/clients/v1" {
		t.Fatalf("json: %v %s", err, back.Schema)
	}
	for _, k := range []string{"target", "op", "model", "concurrency", "ops_per_s", "ci_low", "ci_high", "speedup"} {
		if _, ok := back.Results[0][k]; !ok {
			t.Errorf("result has no %q", k)
		}
	}

	// A crashing arm: its error is kept, the others are still measured.
	srv := startServer(t, Tarantool)
	r := newRunner(cfg, php, &Outcome{})
	arms := []Arm{{Target: Tarantool, Op: "select", Model: ModelSync, Client: ClientOurs},
		{Target: Tarantool, Op: "select", Model: "crash", Client: ClientOurs},
		{Target: Tarantool, Op: "select", Model: ModelPipeline, Depth: 4, Client: ClientOurs}}
	r.cfg.Revs, r.cfg.RetryThreshold = 50, 0
	rows, err := r.main(context.Background(), srv, arms)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rows[1].Error, "unknown model crash") || rows[1].Comparison != nil {
		t.Errorf("crash arm: %+v", rows[1])
	}
	// The round the crash spoiled is not paired: the healthy arms run one more.
	if rows[0].Iterations != 3 || rows[2].Iterations != 3 || rows[0].Error != "" || rows[2].Error != "" || rows[2].Comparison == nil || rows[2].Comparison.N != 2 {
		t.Errorf("healthy arms: %+v / %+v", rows[0], rows[2])
	}
}

// TestUnexpectedOutputFails: a runner that prints anything besides its result line fails the iteration (a
// stand-in runner.php; the real one buffers its output and reports stray output itself).
func TestUnexpectedOutputFails(t *testing.T) {
	php := newPHP(t)
	srv := startServer(t, Redis)
	ok := `echo json_encode(['ok' => true, 'ops' => 10, 'seconds' => 0.5, 'cpu_seconds' => 0.1, 'server_cpu_seconds' => 0]), "\n";`
	for name, body := range map[string]string{
		"":                             ok,
		"unexpected output":            `echo "Notice: hello\n";` + ok,
		"unexpected output on stderr":  `fwrite(STDERR, "Deprecated: x\n");` + ok,
		"php failed":                   `exit(3);`,
		"runner reported 0 ops in 0.5": strings.Replace(ok, "'ops' => 10", "'ops' => 0", 1),
	} {
		if err := os.WriteFile(filepath.Join(php.dir, "runner.php"), []byte("<?php "+body), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := php.Iterate(context.Background(), srv, Arm{Target: Redis, Op: "get", Model: ModelSync, Client: ClientOurs}, 10, 0, 1)
		if name == "" {
			if err != nil || s.Ops != 10 {
				t.Errorf("clean runner: %v %+v", err, s)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("want an error with %q, got %v", name, err)
		}
	}
}

func TestBadServerInput(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	for _, kind := range []string{Tarantool, Redis} {
		_, err := Start(context.Background(), kind, port)
		if exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), "is taken") {
			t.Errorf("%s on a taken port: %v", kind, err)
		}
	}
	t.Setenv("PATH", t.TempDir())
	_, err = Start(context.Background(), Tarantool, 0)
	if exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), "Debian package tarantool") {
		t.Errorf("missing tarantool: %v", err)
	}
}

// TestCancelStopsEverything: a cancelled iteration kills the PHP process group (forked workers included).
func TestCancelStopsEverything(t *testing.T) {
	php := newPHP(t)
	srv := startServer(t, Tarantool)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	a := Arm{Target: Tarantool, Op: "sleep", Model: ModelProcesses, Procs: 2, Client: ClientOurs}
	start := time.Now()
	_, err := php.Iterate(ctx, srv, a, 1000, 0, 1) // 1,000 x 10 ms: far longer than the deadline
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 5*time.Second {
		t.Fatalf("cancelled iteration: %v after %s", err, time.Since(start))
	}
	pid := srv.PID()
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("tarantool %d still running after Stop: %v", pid, err)
	}
}

func TestMedianCI(t *testing.T) {
	if _, _, ok := MedianCI([]float64{1, 2, 3, 4, 5}); ok {
		t.Error("an interval from 5 values")
	}
	x := []float64{10, 1, 9, 2, 8, 3, 7, 4, 6, 5}
	lo, hi, ok := MedianCI(x)
	// n = 10: P(B <= 1) = 11/1024 <= 2.5% < P(B <= 2) = 56/1024, so [x(2), x(9)].
	if !ok || lo != 2 || hi != 9 {
		t.Errorf("n=10: [%v, %v] %v", lo, hi, ok)
	}
	lo, hi, _ = MedianCI([]float64{6, 5, 4, 3, 2, 1})
	if lo != 1 || hi != 6 {
		t.Errorf("n=6: [%v, %v]", lo, hi)
	}
}

// TestPickOf: a sweep's pick is the race's winner when it decided, else the best median among the
// candidates still in (never one dropped or failed, whatever its median).
func TestPickOf(t *testing.T) {
	arm := func(ops ...int) *engineArm {
		a := &engineArm{}
		for _, o := range ops {
			a.samples = append(a.samples, Sample{Ops: o, Seconds: 1})
		}
		return a
	}
	ea := []*engineArm{arm(100, 110), arm(300, 310), arm(200, 190), arm(900)}
	out := &experiment.Outcome{Ended: experiment.EndCap, Arms: []experiment.ArmResult{
		{Status: experiment.StatusOpen}, {Status: experiment.StatusDropped}, {Status: experiment.StatusOpen}, {Status: experiment.StatusError}}}
	if got := pickOf(out, ea); got != 2 {
		t.Errorf("capped race: pick %d, want 2 (the best median still in)", got)
	}
	out.Ended, out.Winner = experiment.EndDecided, 0
	out.Arms[0].Status, out.Arms[2].Status = experiment.StatusWinner, experiment.StatusDropped
	if got := pickOf(out, ea); got != 0 {
		t.Errorf("decided race: pick %d, want its winner 0", got)
	}
	out.Arms[0].Status = experiment.StatusError
	out.Ended = experiment.EndError
	if got := pickOf(out, ea); got != -1 {
		t.Errorf("nothing left: pick %d, want -1", got)
	}
}
