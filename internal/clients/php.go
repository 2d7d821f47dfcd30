package clients

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/procgroup"
	"github.com/phptune/phptune/internal/textline"
	phpsrc "github.com/phptune/phptune/php"
)

// PHP runs benchmark iterations, each in a fresh `php -n` with only the extensions needed, GC off.
type PHP struct {
	Bin     string
	Version string
	// Pcntl: the CLI can fork (the processes models). Phpredis: ext-redis loads (the C baseline).
	Pcntl, Phpredis bool
	// Swoole and Parallel are the extensions' .so files found in PHP's extension dir.
	Swoole, Parallel bool
	dir              string
	redisExts        []string
	noMsgpack        error // why IPROTO cannot run, if it cannot
}

// Needs checks what target needs of PHP (msgpack for Tarantool); the error names the Debian package.
func (p *PHP) Needs(target string) error {
	if target == Tarantool {
		return p.noMsgpack
	}
	return nil
}

// NewPHP checks the PHP CLI and its extensions and writes the embedded runner into a private temp dir.
func NewPHP(ctx context.Context, bin string) (*PHP, error) {
	path, err := exec.LookPath(bin)
	if err != nil {
		return nil, exitcode.MissingErrorf("%s not found: install the Debian package php8.2-cli (or pass --php PATH)", bin)
	}
	p := &PHP{Bin: path}
	probe := func(args ...string) string {
		out, _ := exec.CommandContext(ctx, path, append([]string{"-n"}, args...)...).CombinedOutput()
		return strings.TrimSpace(string(out))
	}
	p.Version = probe("-r", "echo PHP_VERSION;")
	if got := probe("-d", "extension=msgpack", "-r", `echo function_exists("msgpack_pack") ? "ok" : "no";`); got != "ok" {
		p.noMsgpack = exitcode.MissingErrorf("PHP's msgpack extension does not load (%s): install the Debian package php8.2-msgpack", clip(textline.First(strings.TrimSpace(got)), 160))
	}
	p.Pcntl = probe("-r", `echo function_exists("pcntl_fork") ? "ok" : "no";`) == "ok"
	// Debian's phpredis is built with igbinary: load it first when it is there.
	for _, exts := range [][]string{{"igbinary", "redis"}, {"redis"}} {
		var args []string
		for _, e := range exts {
			args = append(args, "-d", "extension="+e)
		}
		if probe(append(args, "-r", `echo class_exists("Redis") ? "ok" : "no";`)...) == "ok" {
			p.Phpredis, p.redisExts = true, exts
			break
		}
	}
	if extDir := probe("-r", `echo ini_get("extension_dir");`); extDir != "" {
		_, e1 := os.Stat(filepath.Join(extDir, "swoole.so"))
		_, e2 := os.Stat(filepath.Join(extDir, "parallel.so"))
		p.Swoole, p.Parallel = e1 == nil, e2 == nil
	}
	if p.dir, err = os.MkdirTemp("", "phptune-php-"); err != nil {
		return nil, fmt.Errorf("php runner dir: %w", err)
	}
	err = fs.WalkDir(phpsrc.FS, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := phpsrc.FS.ReadFile(name)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(p.dir, name), b, 0o644)
	})
	if err != nil {
		p.Close()
		return nil, fmt.Errorf("php runner: %w", err)
	}
	return p, nil
}

// Close removes the runner's temp dir.
func (p *PHP) Close() error { return os.RemoveAll(p.dir) }

// Arm is one way of running an operation: a target, an operation, a concurrency model and a client.
type Arm struct {
	Target string `json:"target"`
	Op     string `json:"op"`
	Model  string `json:"model"`
	Client string `json:"client"`
	Procs  int    `json:"procs,omitempty"`
	Fibers int    `json:"fibers,omitempty"`
	Depth  int    `json:"depth,omitempty"`
}

// Concurrency is the number of requests in flight the model allows.
func (a Arm) Concurrency() int {
	switch a.Model {
	case ModelFibers:
		return a.Fibers
	case ModelProcesses:
		return a.Procs
	case ModelProcFibers:
		return a.Procs * a.Fibers
	case ModelPipeline:
		return a.Depth
	}
	return 1
}

// Label is the arm as a short string: "fibers x25", "processes x2 x fibers x25".
func (a Arm) Label() string {
	var s string
	switch a.Model {
	case ModelFibers:
		s = fmt.Sprintf("fibers x%d", a.Fibers)
	case ModelProcesses:
		s = fmt.Sprintf("processes x%d", a.Procs)
	case ModelProcFibers:
		s = fmt.Sprintf("%d procs x %d fibers", a.Procs, a.Fibers)
	case ModelPipeline:
		s = fmt.Sprintf("pipeline x%d", a.Depth)
	default:
		s = a.Model
	}
	if a.Client != ClientOurs {
		s += " (" + a.Client + ")"
	}
	return s
}

// Sample is one iteration's measurement.
type Sample struct {
	Ops        int     `json:"ops"`
	Seconds    float64 `json:"seconds"`
	CPUSeconds float64 `json:"cpu_seconds"`        // the PHP workers' user + system time in the timed region
	ServerCPU  float64 `json:"server_cpu_seconds"` // the server's, same region (1/100 s resolution)
	Retried    int     `json:"retried,omitempty"`  // times this iteration was re-run (retry threshold)
}

// OpsPerS is the iteration's throughput.
func (s Sample) OpsPerS() float64 { return float64(s.Ops) / s.Seconds }

type runnerResult struct {
	OK        bool    `json:"ok"`
	Error     string  `json:"error"`
	Ops       int     `json:"ops"`
	Seconds   float64 `json:"seconds"`
	CPU       float64 `json:"cpu_seconds"`
	ServerCPU float64 `json:"server_cpu_seconds"`
}

// Iterate runs one iteration of arm against srv in a fresh `php -n`: warmup untimed revolutions on every
// connection, then revs timed ones.
func (p *PHP) Iterate(ctx context.Context, srv *Server, arm Arm, revs, warmup int, seed int64) (Sample, error) {
	plan, err := json.Marshal(map[string]any{
		"target": arm.Target, "op": arm.Op, "model": arm.Model, "client": arm.Client, "procs": arm.Procs,
		"fibers": arm.Fibers, "depth": max(arm.Depth, 1), "revs": revs, "warmup": warmup, "seed": seed,
		"host": srv.Host, "port": srv.Port, "server_pid": srv.PID(),
	})
	if err != nil {
		return Sample{}, err
	}
	// Only the extensions the arm needs: msgpack for IPROTO, phpredis for its own rows.
	args := []string{"-n", "-d", "zend.enable_gc=0", "-d", "memory_limit=512M", "-d", "display_errors=stderr",
		"-d", "log_errors=0"}
	if arm.Target == Tarantool {
		args = append(args, "-d", "extension=msgpack")
	}
	if arm.Client == ClientPhpredis {
		for _, e := range p.redisExts {
			args = append(args, "-d", "extension="+e)
		}
	}
	args = append(args, filepath.Join(p.dir, "runner.php"), string(plan))
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	cmd := exec.Command(p.Bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// Own group (the forked workers too): Ctrl-C or a timeout kills them all; Pdeathsig covers phptune's death.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return Sample{}, fmt.Errorf("start php: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var waitErr error
	select {
	case waitErr = <-done:
	case <-ctx.Done():
		_ = procgroup.Kill(cmd.Process.Pid)
		<-done
		_ = procgroup.WaitGone(cmd.Process.Pid, 2*time.Second)
		return Sample{}, ctx.Err()
	}
	// Forked workers left behind by a crash must not outlive the iteration.
	_ = procgroup.Kill(cmd.Process.Pid)
	var r runnerResult
	out := stdout.Bytes()
	line, rest, _ := bytes.Cut(out, []byte("\n"))
	if jerr := json.Unmarshal(line, &r); jerr != nil || len(bytes.TrimSpace(rest)) > 0 {
		msg := strings.TrimSpace(stderr.String() + "\n" + string(out))
		if msg == "" {
			msg = fmt.Sprint(waitErr)
		}
		return Sample{}, fmt.Errorf("%s: php failed or printed unexpected output: %s", arm.Label(), clip(msg, 400))
	}
	if !r.OK {
		return Sample{}, fmt.Errorf("%s: %s", arm.Label(), r.Error)
	}
	if s := strings.TrimSpace(stderr.String()); s != "" {
		return Sample{}, fmt.Errorf("%s: unexpected output on stderr: %s", arm.Label(), clip(s, 400))
	}
	if r.Ops <= 0 || r.Seconds <= 0 {
		return Sample{}, fmt.Errorf("%s: runner reported %d ops in %gs", arm.Label(), r.Ops, r.Seconds)
	}
	return Sample{Ops: r.Ops, Seconds: r.Seconds, CPUSeconds: r.CPU, ServerCPU: r.ServerCPU}, nil
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
