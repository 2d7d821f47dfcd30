// Package procgroup stops the process groups phptune's children run in (servers, builds, installs), so that
// a child that forks leaves nothing behind: one place for the signals and the waits.
package procgroup

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"syscall"
	"time"
)

// Signal sends sig to every process in group pgid (a child started with Setpgid: its pid); sig 0 only checks
// that one is left (syscall.ESRCH: none).
func Signal(pgid int, sig syscall.Signal) error { return syscall.Kill(-pgid, sig) }

// Kill sends SIGKILL to every process in group pgid.
func Kill(pgid int) error { return Signal(pgid, syscall.SIGKILL) }

// KillOnCancel makes the end of cmd's context (exec.CommandContext) kill cmd's whole group: the default kills
// the leader alone, which leaves a make's compilers running. Wait then returns at most delay later, even while a
// straggler holds cmd's output open. cmd must have Setpgid.
func KillOnCancel(cmd *exec.Cmd, delay time.Duration) {
	cmd.Cancel = func() error { return Kill(cmd.Process.Pid) }
	cmd.WaitDelay = delay
}

// Wait waits for cmd, started with Setpgid. When ctx ends first, the whole group gets SIGTERM (so that a script
// can put back what it changed), and SIGKILL after grace; Wait then returns ctx.Err() itself (never cmd's exit)
// once cmd is waited for, so that callers can tell a stop from a failure.
func Wait(ctx context.Context, cmd *exec.Cmd, grace time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	_ = Signal(cmd.Process.Pid, syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		_ = Kill(cmd.Process.Pid)
		<-done
	}
	return ctx.Err()
}

// Stop ends a server in group pgid, whose waiter closes exited: sig goes to the leader alone (a server stops its
// workers its own way: php-fpm's SIGQUIT lets requests finish), then, once the leader is gone, grace has passed
// or ctx has ended, SIGKILL goes to what is left of the group. Stop returns once exited is closed, and says
// whether the leader outlived grace.
func Stop(ctx context.Context, pgid int, sig syscall.Signal, exited <-chan struct{}, grace time.Duration) (late bool) {
	_ = syscall.Kill(pgid, sig)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-exited:
	case <-t.C:
		late = true
	case <-ctx.Done():
	}
	_ = Kill(pgid) // workers whose master is gone, or a master that did not stop in time
	<-exited
	return late
}

// WaitGone waits until no process is left in process group pgid, killing stragglers, for at most limit.
func WaitGone(pgid int, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		if err := Signal(pgid, 0); errors.Is(err, syscall.ESRCH) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("processes of group %d still running", pgid)
		}
		_ = Kill(pgid)
		time.Sleep(20 * time.Millisecond)
	}
}
