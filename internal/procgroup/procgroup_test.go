package procgroup

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// group starts sh in a group of its own running script, which must start a child in the background and print
// its pid first: the leader and a child, as a server and its workers are.
func group(t *testing.T, ctx context.Context, script string, prep ...func(*exec.Cmd)) (cmd *exec.Cmd, child int) {
	t.Helper()
	cmd = exec.CommandContext(ctx, "sh", "-c", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	for _, p := range prep {
		p(cmd)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if child, err = strconv.Atoi(strings.TrimSpace(line)); err != nil {
		_ = Kill(cmd.Process.Pid)
		_ = cmd.Wait()
		t.Fatalf("child pid: %q: %v", line, err)
	}
	t.Cleanup(func() { _ = syscall.Kill(child, syscall.SIGKILL) })
	return cmd, child
}

// running says whether pid is a live process (a zombie that no one reaped yet is not).
func running(pid int) bool {
	if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	_, after, _ := strings.Cut(string(stat), ") ")
	return !strings.HasPrefix(after, "Z")
}

// bothGone fails unless the leader and the child stop running within a second.
func bothGone(t *testing.T, leader, child int) {
	t.Helper()
	for end := time.Now().Add(time.Second); running(leader) || running(child); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("still running: leader %d %v, child %d %v", leader, running(leader), child, running(child))
		}
	}
}

const (
	plain   = `sleep 60 & echo $!; wait`
	deaf    = `trap '' TERM; sleep 60 & echo $!; wait` // the child inherits the ignored SIGTERM
	onlyTop = `trap 'exit 0' TERM; sleep 60 & echo $!; wait`
)

func TestKillAndWaitGone(t *testing.T) {
	cmd, child := group(t, context.Background(), plain)
	if !running(child) {
		t.Fatalf("child %d not running before Kill", child)
	}
	if err := Kill(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if err := WaitGone(cmd.Process.Pid, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	bothGone(t, cmd.Process.Pid, child)
}

// TestSignal: signal 0 finds a running group, and a signal reaches both the leader and its child.
func TestSignal(t *testing.T) {
	cmd, child := group(t, context.Background(), plain)
	if err := Signal(cmd.Process.Pid, 0); err != nil {
		t.Fatalf("Signal 0 to a running group: %v", err)
	}
	if err := Signal(cmd.Process.Pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	bothGone(t, cmd.Process.Pid, child) // signal 0 still finds the child's zombie until init reaps it: see WaitGone
}

func TestWaitStopsTheGroupWhenCancelled(t *testing.T) {
	for _, c := range []struct {
		name, script string
		grace, least time.Duration
	}{
		{"SIGTERM", plain, 10 * time.Second, 0},
		{"SIGKILL after grace", deaf, 300 * time.Millisecond, 300 * time.Millisecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			cmd, child := group(t, context.Background(), c.script)
			cancel()
			start := time.Now()
			if err := Wait(ctx, cmd, c.grace); !errors.Is(err, context.Canceled) {
				t.Fatalf("Wait = %v, want context.Canceled", err)
			}
			if took := time.Since(start); took < c.least || took > c.grace+2*time.Second {
				t.Errorf("Wait took %s, want %s to %s", took, c.least, c.grace+2*time.Second)
			}
			bothGone(t, cmd.Process.Pid, child)
		})
	}
}

func TestWaitReturnsTheExit(t *testing.T) {
	cmd := exec.Command("sh", "-c", "exit 3")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var ee *exec.ExitError
	if err := Wait(context.Background(), cmd, time.Second); !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("Wait = %v, want exit status 3", err)
	}
}

func TestStop(t *testing.T) {
	for _, c := range []struct {
		name, script string
		late         bool
	}{
		{"leader stops, its child is killed", onlyTop, false},
		{"leader ignores the signal", deaf, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd, child := group(t, context.Background(), c.script)
			exited := make(chan struct{})
			go func() { _ = cmd.Wait(); close(exited) }()
			if late := Stop(context.Background(), cmd.Process.Pid, syscall.SIGTERM, exited, 300*time.Millisecond); late != c.late {
				t.Errorf("Stop late = %v, want %v", late, c.late)
			}
			bothGone(t, cmd.Process.Pid, child)
		})
	}
}

func TestKillOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cmd, child := group(t, ctx, plain, func(cmd *exec.Cmd) { KillOnCancel(cmd, time.Second) })
	cancel()
	if err := cmd.Wait(); err == nil {
		t.Fatal("Wait = nil after cancel, want the kill")
	}
	bothGone(t, cmd.Process.Pid, child)
}
