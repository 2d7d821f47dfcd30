package arms

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/stack"
)

// stallApp is an app whose requests all wait while one holds a lock: every page takes the lock shared, and
// stall.php takes it exclusively for ?ms milliseconds (a cache stampede, a session lock), sending its headers
// once it holds it (unbuffered by nginx). The lock is the served copy's own index.php, so stacks stall apart
// and nothing is written.
var stallApp = map[string]string{
	"index.php": `<?php $f = fopen(__FILE__, 'r'); flock($f, LOCK_SH); echo "ok\n";`,
	"stall.php": `<?php $f = fopen(__DIR__ . '/index.php', 'r'); flock($f, LOCK_EX); header('X-Accel-Buffering: no');
echo "locked\n"; while (ob_get_level()) { ob_end_flush(); } flush();
usleep((int) ($_GET['ms'] ?? 1500) * 1000); echo "stalled\n";`,
}

func writeApp(t *testing.T, files map[string]string) string {
	dir := t.TempDir()
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// stallFor holds every request of w's app for d, from when it returns (the stall's headers came: it holds the
// lock; a fixed wait of 150 ms for that missed it on a starved machine); wait waits for the stall to end.
func stallFor(t *testing.T, w *Stack, d time.Duration) (wait func()) {
	var wg sync.WaitGroup
	wg.Add(1)
	locked := make(chan struct{})
	go func() {
		defer wg.Done()
		defer close(locked) // once: after the headers, or on an error
		resp, err := http.Get(w.Server.HTTPURL + "stall.php?ms=" + strconv.Itoa(int(d/time.Millisecond)))
		if err != nil {
			t.Error(err)
			return
		}
		defer resp.Body.Close()
		locked <- struct{}{}
		io.Copy(io.Discard, resp.Body)
	}()
	<-locked
	return wg.Wait
}

// TestAStallIsNotAHang: a stall (every request held for 1.5 s) met by a fresh stack's URL check, a CPU trial
// and a goodput trial, with --timeout 1s: the check tries again and passes, saying once that the app stalls;
// the CPU trial counts the requests the stall timed out as failures of the trial, not an error of the run; the
// goodput trial is an observation, stretched only while the queue is not known. A page that hangs for good is
// still called hanging, after checkTries tries. (Before, the check's one timeout ended the run: "GET / ... did
// not answer within --timeout: the page hangs".)
func TestAStallIsNotAHang(t *testing.T) {
	o := Config{Stack: stack.Config{App: writeApp(t, stallApp)}, Timeout: time.Second, URLs: []load.MixItem{{URI: "/", Weight: 1}}}
	var mu sync.Mutex
	var warnings []string
	l := &Lengths{Win: 300 * time.Millisecond, Warm: 100 * time.Millisecond, CPURequests: 40}
	s := newStackSet(o, l, func(TrialRecord) {}, func(w string) {
		mu.Lock()
		warnings = append(warnings, w)
		mu.Unlock()
	})
	defer s.StopAll()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := knob.Debian()
	cfg.PM, cfg.MaxChildren = "static", 4
	arm := s.shared(cfg, TrialSpec{Phase: "knob x", Metric: MetricCPU, Conc: 2}).(*stackArm)
	if err := arm.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer arm.Stop()
	w := arm.w

	wait := stallFor(t, w, 1500*time.Millisecond)
	if err := s.check(ctx, w); err != nil {
		t.Errorf("the check met a 1.5 s stall with --timeout 1s: %v", err)
	}
	wait()
	if len(warnings) != 1 || !strings.Contains(warnings[0], "stalls now and then") {
		t.Errorf("warnings %q: want one saying the app stalls now and then", warnings)
	}

	wait = stallFor(t, w, 1500*time.Millisecond)
	obs, err := arm.Trial(ctx)
	wait()
	if err != nil || obs.Errors == 0 || !(obs.Value > 0) {
		t.Errorf("a CPU trial in a stall: %+v, %v; want the timed-out requests as its failures, and a figure", obs, err)
	}

	good := s.shared(cfg, TrialSpec{Phase: "knob y", Metric: MetricGoodput, Conc: 2}).(*stackArm)
	if err := good.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer good.Stop()
	wait = stallFor(t, good.w, 1500*time.Millisecond)
	obs, err = good.Trial(ctx)
	wait()
	if err != nil || !(obs.Value > 0) {
		t.Errorf("a goodput trial in a stall: %+v, %v; want an observation", obs, err)
	}
	// Once its windows are known to complete requests, a window in a stall is what the app served: nothing, not
	// a window stretched until the stall ends (which would serve some). It lasts its warm-up, its window and the
	// drain: the requests in flight wait out the timeout, and on a busy machine one that timed out in the window
	// may be followed by one that waits it out again.
	wait = stallFor(t, good.w, 1500*time.Millisecond)
	began := time.Now()
	obs, err = good.Trial(ctx)
	took := time.Since(began)
	wait()
	if err != nil || obs.Requests != 0 || !(obs.Value > 0) || took > 3*o.Timeout {
		t.Errorf("a goodput trial in a stall, the queue known: %+v, %v in %s; want an empty window counted as it was, not stretched", obs, err, took)
	}

	began = time.Now()
	wait = stallFor(t, w, checkTries*o.Timeout+600*time.Millisecond)
	err = s.check(ctx, w)
	wait()
	if !errors.Is(err, load.ErrNoAnswer) || !strings.Contains(err.Error(), fmt.Sprintf("%d tries", checkTries)) {
		t.Errorf("a page held longer than %d tries of --timeout: %v; want it called hanging after %d tries", checkTries, err, checkTries)
	}
	if d := time.Since(began); d < checkTries*o.Timeout {
		t.Errorf("called hanging after %s, before %d tries of --timeout", d, checkTries)
	}
}
