package arms

import (
	"testing"

	"github.com/phptune/phptune/internal/measure"
)

// The worker that served the URL is told apart from those that served status reads, as php-fpm shows them
// (seen on the test machine): the status worker's finished request reads "-", a worker still freeing a large
// request is Finishing with no figure yet.
func TestServedMemory(t *testing.T) {
	st := func(ps ...measure.FPMProcess) *measure.FPMStatus { return &measure.FPMStatus{Processes: ps} }
	before := st(measure.FPMProcess{PID: 1, State: "Running", Requests: 2, RequestURI: "/fpm-status?json&full"},
		measure.FPMProcess{PID: 2, State: "Idle", Requests: 3, RequestURI: "/index.php?big", LastRequestMemory: 50 << 20})
	cases := []struct {
		after     *measure.FPMStatus
		mem       int64
		finishing bool
	}{
		{st(measure.FPMProcess{PID: 1, State: "Running", Requests: 4, RequestURI: "/fpm-status?json&full"},
			measure.FPMProcess{PID: 2, State: "Idle", Requests: 4, RequestURI: "/index.php?big", LastRequestMemory: 52 << 20}), 52 << 20, false},
		{st(measure.FPMProcess{PID: 1, State: "Running", Requests: 4, RequestURI: "/fpm-status?json&full"},
			measure.FPMProcess{PID: 2, State: "Finishing", Requests: 4, RequestURI: "/index.php?big"}), 0, true},
		{st(measure.FPMProcess{PID: 1, State: "Idle", Requests: 5, RequestURI: "-", LastRequestMemory: 2 << 20},
			measure.FPMProcess{PID: 2, State: "Running", Requests: 5, RequestURI: "/fpm-status?json&full"}), 0, false},
		{st(measure.FPMProcess{PID: 1, State: "Idle", Requests: 5, RequestURI: "/index.php?a", LastRequestMemory: 2 << 20},
			measure.FPMProcess{PID: 2, State: "Running", Requests: 5, RequestURI: "/fpm-status?json&full"}), 0, false},
	}
	for i, c := range cases {
		mem, fin := servedMemory(before, c.after, "/fpm-status", "/?big")
		if mem != c.mem || fin != c.finishing {
			t.Errorf("case %d: %d, finishing %v; want %d, %v", i, mem, fin, c.mem, c.finishing)
		}
	}
	if mem, _ := servedMemory(nil, before, "/fpm-status", "/?big"); mem != 0 {
		t.Error("no status before: not to be told")
	}
}
