package heavylock

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// A second taker waits while the lock is held and gets it once the first lets go; one whose context ends while
// it waits gives up with the context's error and does not hold the lock after.
func TestTakersWaitInTurn(t *testing.T) {
	path := filepath.Join(t.TempDir(), "heavy.lock")
	release, err := Take(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := Take(ctx, path); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a second taker while the lock is held: %v, want it waiting until its context ends", err)
	}
	got := make(chan error, 1)
	go func() {
		r, err := Take(context.Background(), path)
		if err == nil {
			r()
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("a taker got the held lock: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	release()
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting taker never got the lock once it was let go")
	}
}

func TestLastLine(t *testing.T) {
	if got := LastLine("building\nerror: no php-fpm\n\n"); got != "error: no php-fpm" {
		t.Errorf("LastLine = %q", got)
	}
}
