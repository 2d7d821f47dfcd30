package apply

import (
	"strings"
	"testing"
)

// TestStatusPage: the pool keeps its own status path; one without gets /fpm-status, after Debian's
// commented-out example, with a comment.
func TestStatusPage(t *testing.T) {
	own := "[www]\nlisten = /run/php/x.sock\npm.status_path = /st\n"
	pool, _ := poolConf(own)
	if statusPage(pool); pool.String() != own {
		t.Errorf("a pool with its own status path: %q", pool.String())
	}
	pool, _ = poolConf("[www]\nlisten = /run/php/x.sock\n;pm.status_path = /status\npm = dynamic\n")
	statusPage(pool)
	if got := pool.String(); !strings.Contains(got, ";pm.status_path = /status\n; phptune check reads the pool here") ||
		!strings.Contains(got, "passes it\npm.status_path = /fpm-status\npm = dynamic\n") {
		t.Errorf("a pool without one:\n%s", got)
	}
}
