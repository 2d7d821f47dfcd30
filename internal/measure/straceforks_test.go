package measure

import (
	"context"
	"errors"
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
	// The subshell is the old child.
	churn := startChurn(t, "(while :; do sleep 0.5 & sleep 0.002; done) & sleep 60 & wait")
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
