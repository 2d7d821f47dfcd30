package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// profileApp writes an app whose front controller autoloads n classes, one file each.
func profileApp(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	idx := fmt.Sprintf("<?php\nspl_autoload_register(function ($c) { require __DIR__ . '/lib/' . $c . '.php'; });\n"+
		"$s = 0;\nfor ($i = 0; $i < %d; $i++) { $c = \"K$i\"; $s += (new $c)->v(); }\necho \"ok $s\\n\";\n", n)
	if err := os.WriteFile(filepath.Join(dir, "index.php"), []byte(idx), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		src := fmt.Sprintf("<?php\nfinal class K%d { public function v(): int { return array_sum(range(0, %d)); } }\n", i, i+10)
		if err := os.WriteFile(filepath.Join(dir, "lib", fmt.Sprintf("K%d.php", i)), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

type profileJSON struct {
	Schema   string `json:"schema"`
	Partial  bool   `json:"partial"`
	Variants []struct {
		Name               string             `json:"name"`
		Error              string             `json:"error"`
		SyscallsPerReq     float64            `json:"syscalls_per_req"`
		Syscalls           map[string]float64 `json:"syscalls"`
		InstructionsPerReq float64            `json:"instructions_per_req"`
		MeanPSS            int64              `json:"mean_pss"`
		Opcache            *struct {
			Enabled bool `json:"enabled"`
		} `json:"opcache"`
	} `json:"variants"`
}

// subreaper makes this test process adopt orphaned descendants, so that anything the CLI leaves behind shows up
// as a child of ours, whatever else runs on the machine.
func subreaper(t *testing.T) {
	t.Helper()
	const prSetChildSubreaper = 36
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		t.Fatalf("prctl(PR_SET_CHILD_SUBREAPER): %v", errno)
	}
}

// adopted lists live processes whose parent is this test process (after reaping the dead ones), other than
// the commands a test still runs.
func adopted(t *testing.T) []string {
	t.Helper()
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if err != nil || pid <= 0 {
			break
		}
	}
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(b)
		end := strings.LastIndexByte(s, ')')
		f := strings.Fields(s[end+1:])
		if len(f) > 2 && f[1] == strconv.Itoa(os.Getpid()) && f[0] != "Z" {
			out = append(out, fmt.Sprintf("%d %s", pid, s[:end+1]))
		}
	}
	return out
}

func TestProfileOpcacheOffVsOn(t *testing.T) {
	subreaper(t)
	app := profileApp(t, 30)
	out := t.TempDir()
	r := phptune(t, "profile", app, "--compare", "opcache=off", "--requests", "60", "--instr-warmup", "1", "--instr-n", "1",
		"--json", "--out", out)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var res profileJSON
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	if res.Schema != "phptune/profile/v1" || res.Partial || len(res.Variants) != 2 {
		t.Fatalf("got %+v", res)
	}
	on, off := res.Variants[0], res.Variants[1]
	if on.Name != "baseline" || off.Name != "opcache=off" || on.Error != "" || off.Error != "" {
		t.Fatalf("variants %+v", res.Variants)
	}
	t.Logf("syscalls per request: on %.1f, off %.1f; instructions: on %.0f, off %.0f", on.SyscallsPerReq, off.SyscallsPerReq,
		on.InstructionsPerReq, off.InstructionsPerReq)
	if off.SyscallsPerReq < 3*on.SyscallsPerReq || off.Syscalls["openat"] < 30 {
		t.Errorf("syscalls per request: off %.1f (openat %.1f), on %.1f: want off several times on", off.SyscallsPerReq, off.Syscalls["openat"], on.SyscallsPerReq)
	}
	if on.InstructionsPerReq <= 0 || off.InstructionsPerReq <= on.InstructionsPerReq {
		t.Errorf("instructions per request: on %.0f, off %.0f", on.InstructionsPerReq, off.InstructionsPerReq)
	}
	if on.Opcache == nil || !on.Opcache.Enabled || off.Opcache == nil || off.Opcache.Enabled || on.MeanPSS <= 0 {
		t.Errorf("opcache/memory: %+v %+v", on, off)
	}
	saved, err := os.ReadFile(filepath.Join(out, "result.json"))
	if err != nil || string(saved) != r.stdout {
		t.Errorf("result.json differs from the printed JSON (%v)", err)
	}
	if left := adopted(t); len(left) > 0 {
		t.Errorf("processes left behind: %v", left)
	}

	// The tables: one column a variant, the difference last.
	r = phptune(t, "profile", app, "--compare", "opcache=off", "--requests", "20", "--without", "instructions")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"System calls per request", "openat", "difference", "Memory per worker", "hit rate", "Huge pages"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, r.stdout)
		}
	}
}

func TestProfileBadInput(t *testing.T) {
	app := profileApp(t, 2)
	empty := t.TempDir()
	for _, c := range []struct {
		env  []string
		args []string
		want string
	}{
		{[]string{"PATH=" + empty}, []string{"profile", app}, "apt-get install strace"},
		{[]string{"PATH=" + empty}, []string{"profile", app, "--without", "syscalls"}, "apt-get install valgrind"},
		{nil, []string{"profile", app, "--compare", "opcache=maybe"}, "opcache"},
		{nil, []string{"profile", app, "--compare", "nothing"}, "want NAME=VALUE"},
		{nil, []string{"profile", app, "--without", "memory"}, "--without memory"},
		{nil, []string{"profile", app, "--slowlog", "200ms", "--without", "instructions"}, "whole seconds"},
	} {
		cmd := exec.Command(binPath(t), c.args...)
		cmd.Env = append(os.Environ(), c.env...)
		var se strings.Builder
		cmd.Stderr = &se
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(se.String(), c.want) {
			t.Errorf("%v %v: %v, stderr %q: want exit 2 saying %q", c.env, c.args, err, se.String(), c.want)
		}
	}
}

// TestProfileInterrupt: Ctrl-C in the middle stops every process and prints what was done, marked partial.
func TestProfileInterrupt(t *testing.T) {
	subreaper(t)
	app := profileApp(t, 10)
	// --instr-n 100000: the baseline's callgrind run outlasts any wait for it (20 requests once took a second).
	w := startWatched(t, nil, "profile", app, "--compare", "opcache=off", "--requests", "50", "--instr-n", "100000", "--json")
	w.until(t, "callgrind running", func() bool {
		return strings.Contains(w.se.String(), ": callgrind ") && len(descendantsMentioning(w.cmd.Process.Pid, "--tool=callgrind")) > 0
	})
	code, took := w.stop(t, syscall.SIGINT)
	if code != 130 {
		t.Fatalf("profile after SIGINT: exit %d, want 130; stderr %s", code, w.se.String())
	}
	if took > 5*time.Second {
		t.Errorf("profile took %s to stop", took)
	}
	var res profileJSON
	if err := json.Unmarshal([]byte(w.so.String()), &res); err != nil {
		t.Fatalf("%v: %s", err, w.so.String())
	}
	if !res.Partial || len(res.Variants) == 0 || res.Variants[len(res.Variants)-1].Error != "interrupted" {
		t.Errorf("want a partial result whose last variant was interrupted: %+v", res)
	}
	// Orphans the kernel hands to this process as they lose their parent: a moment for them to go.
	var left []string
	if !poll(10*time.Second, func() bool { left = adopted(t); return len(left) == 0 }) {
		t.Errorf("processes left behind: %v", left)
	}
}

// descendantsMentioning lists the pids below pid whose command line mentions s.
func descendantsMentioning(pid int, s string) []int {
	var out []int
	for _, c := range childrenOf(pid) {
		if cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", c)); err == nil && strings.Contains(string(cmdline), s) {
			out = append(out, c)
		}
		out = append(out, descendantsMentioning(c, s)...)
	}
	return out
}

// TestProfileRecyclingPool: a pool whose workers are replaced every 20 requests is profiled: a worker that exits
// before strace reaches it is let go, its successors followed, and every request sent is counted as traced.
func TestProfileRecyclingPool(t *testing.T) {
	app := profileApp(t, 3)
	r := phptune(t, "profile", app, "--knob", "max_requests=20", "--without", "instructions", "--requests", "200",
		"--warmup-rounds", "39", "--json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var res struct {
		Variants []struct {
			Error           string  `json:"error"`
			SyscallsPerReq  float64 `json:"syscalls_per_req"`
			TracedRequests  int     `json:"traced_requests"`
			TracedProcesses int     `json:"traced_processes"`
		} `json:"variants"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	if len(res.Variants) != 1 {
		t.Fatalf("variants %+v", res.Variants)
	}
	v := res.Variants[0]
	t.Logf("%.1f syscalls/req over %d requests, %d processes traced", v.SyscallsPerReq, v.TracedRequests, v.TracedProcesses)
	if v.Error != "" || v.TracedRequests != 200 || v.TracedProcesses < 8 || v.SyscallsPerReq <= 0 {
		t.Errorf("got %+v: want 200 requests traced over the recycled workers' successors too", v)
	}
}
