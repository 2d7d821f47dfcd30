package load

import "testing"

func TestDefaultProcs(t *testing.T) {
	for _, c := range []struct{ cpus, host, want int }{
		{1, 2, 1},  // a 2-CPU host, or a quota of 1: the server keeps a core
		{2, 2, 1},  // the same
		{1, 16, 1}, // a quota of 1 CPU on 16: one, not 16
		{4, 16, 4}, // a quota of 4 on 16: the quota's
		{8, 8, 0},  // no quota: the runtime's own
	} {
		if got := defaultProcs(c.cpus, c.host); got != c.want {
			t.Errorf("defaultProcs(%d, %d) = %d, want %d", c.cpus, c.host, got, c.want)
		}
	}
}
