//go:build faults

package main

import (
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/textline"
)

// The slow part of the fault suite (bench/faults.sh): faults that need whole runs, and a soak.

// fdCount is the number of open file descriptors of pid, from /proc.
func fdCount(pid int) int {
	entries, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "fd"))
	if err != nil {
		return -1
	}
	return len(entries)
}

// TestSoak: ten short tune runs back to back on the demo app leave no process, private dir or temporary file,
// phptune's own descriptors stay as few at the tenth run as at the first, and the tenth run's recommendation
// serves as fast as the first's (the machine is not left slower).
func TestSoak(t *testing.T) {
	const runs = 10
	before := privDirs()
	var maxFDs [runs]int
	var served [runs]float64
	for i := 0; i < runs; i++ {
		out := filepath.Join(t.TempDir(), "out")
		r := startFault(t, "tune", "--budget", "30s", "--no-screen", "--only", "opcache", "--out", out)
		r.out = out
		var peak atomic.Int64
		stop := make(chan struct{})
		go func() {
			for {
				select {
				case <-stop:
					return
				case <-time.After(200 * time.Millisecond):
				}
				if n := int64(fdCount(r.cmd.Process.Pid)); n > peak.Load() {
					peak.Store(n)
				}
			}
		}()
		code := r.wait(t, 3*time.Minute)
		close(stop)
		if code != 0 {
			t.Fatalf("run %d: exit %d\n%s", i+1, code, r.se.String())
		}
		for _, l := range r.leftovers() {
			t.Errorf("run %d left behind: %s", i+1, l)
		}
		res := readTuneFile(t, filepath.Join(out, "result.json"))
		if res.Headline != nil {
			served[i] = res.Headline.RecommendationRPS
		}
		maxFDs[i] = int(peak.Load())
		t.Logf("run %2d: peak %d descriptors, recommendation serves %.0f req/s", i+1, maxFDs[i], served[i])
	}
	if maxFDs[runs-1] > maxFDs[0]+8 {
		t.Errorf("descriptors grow from run to run: %v", maxFDs)
	}
	if served[0] <= 0 || served[runs-1] < 0.8*served[0] {
		t.Errorf("the tenth run's recommendation serves %.0f req/s against the first's %.0f", served[runs-1], served[0])
	}
	for d := range privDirs() {
		if !before[d] {
			t.Errorf("a private dir made during the soak is still there: %s", d)
		}
	}
}

// TestFaultsWorkersDie: workers killed again and again during a run are php-fpm's business (it forks new ones):
// the run ends normally with a valid result and nothing left behind.
func TestFaultsWorkersDie(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	r := startFault(t, "tune", "--budget", "40s", "--no-screen", "--only", "opcache", "--out", out)
	// A worker killed as each of the run's first steps begins (a sweep point, a trial of the race: its progress
	// lines), not at times: ten kills spread over the run, each while it serves.
	killed := 0
	for seen := 0; killed < 10; {
		if !r.waitFor(waitLimit, func() bool { return r.ended() || tuneLines(r.se.String()) > seen }) || r.ended() {
			break
		}
		seen = tuneLines(r.se.String())
		for _, m := range r.masters("php-fpm") {
			if kids := childrenOf(m); len(kids) > 0 {
				syscall.Kill(kids[0], syscall.SIGKILL)
				killed++
			}
		}
	}
	code := r.wait(t, 2*time.Minute)
	t.Logf("killed %d workers; exit %d; %s", killed, code, textline.Last(r.se.String()))
	if killed == 0 {
		t.Error("no worker was killed")
	}
	if code != 0 {
		t.Errorf("exit %d\n%s\n%s", code, r.so.String(), r.se.String())
	}
	if res := readTune(t, filepath.Join(out, "result.json")); res.Partial {
		t.Error("result marked partial")
	}
	for _, l := range r.leftovers() {
		t.Errorf("left behind: %s", l)
	}
}
