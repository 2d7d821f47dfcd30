// Package heavylock is the benches' lock on heavy work: runs that each take the machine take a file lock in turn,
// so two benches (or a bench and a measurement) never measure at once.
package heavylock

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
)

// Take takes the lock file, waiting in line with the other takers (a blocking flock: they are woken in turn); an
// interrupt while it waits stops the bench, and the lock, if it comes later, is let go at once.
func Take(ctx context.Context, path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	got := make(chan error, 1)
	go func() { got <- syscall.Flock(int(f.Fd()), syscall.LOCK_EX) }()
	select {
	case err := <-got:
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		return func() { f.Close() }, nil
	case <-ctx.Done():
		go func() {
			<-got
			f.Close()
		}()
		return nil, ctx.Err()
	}
}

// LastLine is the last line of a command's output: where its error is.
func LastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
