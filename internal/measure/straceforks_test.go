package measure

import (
	"context"
	"errors"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// TestTraceGroupCatchesAnOldChildsForks: the group's old child (older than any strace, so the master's strace
// does not follow it) forks on and on, each of its children living half a second. Between the listing of the
// group and the second strace's attaching it forks some no strace follows: they are caught by a further strace,
// never left untraced and never a failure.
func TestTraceGroupCatchesAnOldChildsForks(t *testing.T) {
	if _, err := FindStrace(); err != nil {
		t.Fatalf("%v (apt-get install strace)", err)
	}
	// bash forks (dash vforks, which meets strace 6.1's detach deadlock); the subshell is the old child.
	churn := exec.Command("bash", "-c", "(while :; do sleep 0.5 & sleep 0.002; done) & sleep 60 & wait")
	churn.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := churn.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { syscall.Kill(-churn.Process.Pid, syscall.SIGKILL); churn.Wait() }()
	for end := time.Now().Add(30 * time.Second); !hasSleep60(churn.Process.Pid); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("bash did not fork its children in 30 s")
		}
	}
	time.Sleep(600 * time.Millisecond) // the old child's children come and go
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i := 0; i < 5; i++ {
		tr, err := TraceGroup(ctx, churn.Process.Pid)
		if err != nil {
			t.Fatalf("attempt %d: %v", i, err)
		}
		missed, err := stillUntraced(tr, churn.Process.Pid)
		if err != nil || len(missed) > 0 {
			t.Errorf("attempt %d: untraced %v (%v)", i, missed, err)
		}
		if _, err := tr.Stop(); err != nil && !errors.Is(err, ErrStraceHung) {
			t.Fatalf("attempt %d: %v", i, err)
		}
	}
}
