package k6

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/phptune/phptune/internal/clock"
	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/textline"
)

// Engine runs each trial as one k6 test, split into Instances by execution segments, each instance run here or
// on one of Hosts over ssh (round robin), their points merged into one result.
type Engine struct {
	Binary       string   // k6 here (Find)
	Instances    int      // at least 1
	Hosts        []string // ssh destinations ([user@]host or ssh://user@host:port); empty: all instances here
	SSH          []string // the ssh command and its options
	RemoteBinary string   // k6 on the hosts
}

// Lag is how far behind the first an instance may start its measured window, or how far below the others' its
// rate per VU may fall, before the result says so.
const (
	lagStart = time.Second
	lagRate  = 0.8
)

// instance is one k6 process of a trial.
type instance struct {
	name string
	cmd  *exec.Cmd
	rec  *load.Recorder
	out  Output
	err  error
	tail tailBuffer // the end of its stderr
	vus  int
}

// Trial runs one trial of o (the load.Engine interface).
func (e *Engine) Trial(ctx context.Context, o *load.Options, trial, trials int) (*load.Result, error) {
	script, err := Script(o)
	if err != nil {
		return nil, err
	}
	n := max(e.Instances, 1)
	if o.Connections < n {
		return nil, exitcode.UsageErrorf("--k6-instances %d: more instances than the %d connections (VUs) to share among them", n, o.Connections)
	}
	dir, err := os.MkdirTemp("", "phptune-k6-")
	if err != nil {
		return nil, fmt.Errorf("k6: %w", err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "script.js")
	if err := os.WriteFile(path, []byte(script), 0o600); err != nil {
		return nil, fmt.Errorf("k6: write the script: %w", err)
	}
	t0 := time.Now()
	var live atomic.Int64
	insts := make([]*instance, n)
	for i := range insts {
		insts[i] = e.instance(ctx, o, i, n, path, script, t0)
	}
	stop := progress(o, &live, t0, trial, trials)
	var wg sync.WaitGroup
	for _, in := range insts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in.run(&live)
		}()
	}
	wg.Wait()
	stop()
	return e.merge(ctx, o, insts)
}

// instance prepares instance i of n.
func (e *Engine) instance(ctx context.Context, o *load.Options, i, n int, path, script string, t0 time.Time) *instance {
	args := []string{"run", "--quiet", "--no-summary", "--no-color", "--no-usage-report", "--no-thresholds",
		"--address", "127.0.0.1:0", "--log-output", "stderr", "--out", "json=-"}
	if n > 1 {
		args = append(args, "--execution-segment", fmt.Sprintf("%d/%d:%d/%d", i, n, i+1, n),
			"--execution-segment-sequence", segmentSequence(n))
	}
	in := &instance{name: fmt.Sprintf("k6 instance %d/%d", i+1, n), vus: o.Connections*(i+1)/n - o.Connections*i/n}
	var cmd *exec.Cmd
	if len(e.Hosts) > 0 {
		host := e.Hosts[i%len(e.Hosts)]
		in.name += " on " + host
		remote := append([]string{e.RemoteBinary}, args...)
		ssh := append(append(append([]string{}, e.SSH[1:]...), "-o", "BatchMode=yes", host, "--"), shellQuote(append(remote, "-")))
		cmd = exec.CommandContext(ctx, e.SSH[0], ssh...)
		cmd.Stdin = strings.NewReader(script)
	} else {
		cmd = exec.CommandContext(ctx, e.Binary, append(args, path)...)
		cmd.Env = append(os.Environ(), "K6_NO_USAGE_REPORT=true")
	}
	// Cancelled, k6 stops its test on SIGINT and writes the points it holds; ssh carries none, so it ends, and
	// the remote k6 dies on its next write to the closed channel.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGINT) }
	cmd.WaitDelay = 10 * time.Second
	cmd.Stderr = &in.tail
	in.cmd = cmd
	in.rec = load.NewRecorder(o, t0)
	in.out.Name = in.name
	return in
}

func (in *instance) run(live *atomic.Int64) {
	stdout, err := in.cmd.StdoutPipe()
	if err == nil {
		err = in.cmd.Start()
	}
	if err != nil {
		in.err = fmt.Errorf("%s: %w", in.name, err)
		return
	}
	rd := reader{rec: in.rec, out: &in.out, live: live}
	readErr := rd.Read(stdout)
	if readErr != nil {
		_, _ = io.Copy(io.Discard, stdout) // k6 must not block on a full pipe

	}
	in.err = in.cmd.Wait()
	if in.err == nil {
		in.err = readErr
	}
}

// merge is the trial's result from its instances, or the first instance's failure.
func (e *Engine) merge(ctx context.Context, o *load.Options, insts []*instance) (*load.Result, error) {
	var failed error
	for _, in := range insts {
		if in.err != nil && ctx.Err() == nil && failed == nil {
			failed = exitcode.WithCode(exitcode.Failed, fmt.Errorf("%s failed: %v%s", in.name, in.err, in.tail.lastLine()))
		}
	}
	if failed != nil {
		return nil, failed
	}
	first := insts[0]
	var more []*load.Recorder
	cpu := time.Duration(0)
	for _, in := range insts {
		if in != first {
			more = append(more, in.rec)
		}
		if len(e.Hosts) == 0 && in.cmd.ProcessState != nil {
			cpu += in.cmd.ProcessState.UserTime() + in.cmd.ProcessState.SystemTime()
		}
	}
	for _, w := range lagWarnings(o, insts) {
		first.rec.Warn(w)
	}
	window := o.Duration
	if o.Requests > 0 || ctx.Err() != nil {
		window = 0
		for _, in := range insts {
			window = max(window, in.out.Window())
		}
	}
	res := first.rec.Result(max(window, time.Millisecond), cpu, more...)
	if ctx.Err() != nil {
		res.Partial = true
		return res, ctx.Err()
	}
	if res.Requests == 0 {
		return res, load.ErrNoRequests
	}
	return res, nil
}

// lagWarnings names the instances that started their measured window late or sent at a lower rate per VU than
// the others (a busy or distant load host).
func lagWarnings(o *load.Options, insts []*instance) []string {
	if len(insts) < 2 {
		return nil
	}
	var w []string
	var start time.Time
	total, vus := 0.0, 0
	for _, in := range insts {
		if !in.out.FirstSeen.IsZero() && (start.IsZero() || in.out.FirstSeen.Before(start)) {
			start = in.out.FirstSeen
		}
		total += float64(in.out.Requests)
		vus += in.vus
	}
	for _, in := range insts {
		if in.out.Requests == 0 {
			w = append(w, in.name+" measured no request")
			continue
		}
		if late := in.out.FirstSeen.Sub(start); late > lagStart {
			w = append(w, fmt.Sprintf("%s started its measured window %s after the first instance: the instances' loads overlapped for less than the window", in.name, late.Round(10*time.Millisecond)))
		}
		others := (total - float64(in.out.Requests)) / float64(vus-in.vus)
		if mine := float64(in.out.Requests) / float64(in.vus); o.Rate == 0 && others > 0 && mine < lagRate*others {
			w = append(w, fmt.Sprintf("%s lagged: %.0f requests per VU against %.0f for the others (a busy or distant load host)", in.name, mine, others))
		}
	}
	return w
}

// segmentSequence is "0,1/n,2/n,...,1": the instances' segments cover the test once.
func segmentSequence(n int) string {
	parts := []string{"0"}
	for i := 1; i < n; i++ {
		parts = append(parts, fmt.Sprintf("%d/%d", i, n))
	}
	return strings.Join(append(parts, "1"), ",")
}

// shellQuote is argv as one command line for the remote shell.
func shellQuote(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = textline.Quote(a)
	}
	return strings.Join(q, " ")
}

// progress reports the requests so far about twice a second until stopped.
func progress(o *load.Options, live *atomic.Int64, t0 time.Time, trial, trials int) (stop func()) {
	if o.Progress == nil {
		return func() {}
	}
	return clock.Every(500*time.Millisecond, func(now time.Time) {
		el := now.Sub(t0)
		o.Progress(load.Progress{Trial: trial, Trials: trials, Elapsed: el, Total: o.Warmup + o.Duration, Warmup: el < o.Warmup, Requests: live.Load()})
	})
}

// tailBuffer keeps the last 4 KiB written to it.
type tailBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > 4096 {
		t.b = t.b[len(t.b)-4096:]
	}
	return len(p), nil
}

// lastLine is ": " and the last line k6 wrote to stderr, or "".
func (t *tailBuffer) lastLine() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if l := strings.TrimSpace(textline.Last(string(t.b))); l != "" {
		return ": " + l
	}
	return ""
}

// New is the engine for a run on t: instances of k6 here (bin, as Find takes it), or on hosts over ssh (the
// command and its options) with remote there.
func New(t load.Target, instances int, hosts []string, ssh, remote, bin string) (*Engine, error) {
	if t.Protocol != load.HTTP {
		return nil, exitcode.UsageErrorf("--engine k6: k6 speaks HTTP and %s is FastCGI: give an http:// target (nginx in front of php-fpm)", t.Raw)
	}
	if instances < 1 {
		return nil, exitcode.UsageErrorf("--k6-instances %d: want at least 1", instances)
	}
	e := &Engine{Instances: instances, Hosts: hosts, SSH: strings.Fields(ssh), RemoteBinary: remote}
	if len(hosts) > 0 {
		if len(e.SSH) == 0 {
			return nil, exitcode.UsageErrorf("--k6-ssh: want the ssh command")
		}
		return e, nil
	}
	path, err := Find(bin)
	if err != nil {
		return nil, err
	}
	e.Binary = path
	return e, nil
}

// Find is the k6 to run: bin when it names one, else k6 on PATH, else bin/k6 beside phptune's executable (make
// k6 builds it there); a missing k6 is a usage error that says how to get it.
func Find(bin string) (string, error) {
	if bin != "" && bin != "k6" {
		if _, err := exec.LookPath(bin); err != nil {
			return "", exitcode.UsageErrorf("--k6 %s: %v: build k6 with `make k6` (pinned in tools/k6) or give its path", bin, err)
		}
		return bin, nil
	}
	if p, err := exec.LookPath("k6"); err == nil {
		return p, nil
	}
	if exe, err := os.Executable(); err == nil {
		if p := filepath.Join(filepath.Dir(exe), "k6"); isExec(p) {
			return p, nil
		}
	}
	return "", exitcode.UsageErrorf("k6 not found on PATH nor beside phptune: build it with `make k6` (Grafana k6, pinned in tools/k6, into bin/k6) or give --k6 PATH")
}

func isExec(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}
