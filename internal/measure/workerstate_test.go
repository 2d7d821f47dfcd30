package measure

import (
	"fmt"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

func TestSyscallName(t *testing.T) {
	for in, want := range map[string]string{
		fmt.Sprintf("%d 0xc 0x7ffc 0x7ffc 0x1 0x0 0x0 0x7ffc 0x7f71", syscall.SYS_ACCEPT): "accept",
		"running": "", "-1 0x7ffc 0x7f71": "", "": "", "99999 0x1": "syscall 99999",
	} {
		if got := syscallName(in); got != want {
			t.Errorf("syscallName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestReadWorkerState: a process blocked in a sleep is found in it, not idle.
func TestReadWorkerState(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Skip(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	var w WorkerState
	sleeping := func() bool { return (w.Syscall == "clock_nanosleep" || w.Syscall == "nanosleep") && w.State == "S" }
	for end := time.Now().Add(5 * time.Second); !sleeping() && time.Now().Before(end); {
		w, _ = ReadWorkerState(cmd.Process.Pid) // until it has started sleeping: a state, not a time
	}
	if w.Idle() || !sleeping() || w.Doing() != "in "+w.Syscall {
		t.Errorf("sleep 30: %+v (%s)", w, w.Doing())
	}
}
