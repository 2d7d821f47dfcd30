// Package procgroup waits for a process group to be gone, so that a server phptune started leaves nothing behind.
package procgroup

import (
	"errors"
	"fmt"
	"syscall"
	"time"
)

// WaitGone waits until no process is left in process group pgid, killing stragglers, for at most limit.
func WaitGone(pgid int, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("processes of group %d still running", pgid)
		}
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		time.Sleep(20 * time.Millisecond)
	}
}
