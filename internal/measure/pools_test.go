package measure_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/phptune/phptune/internal/measure"
	"github.com/phptune/phptune/internal/stack"
	"github.com/phptune/phptune/workloads"
)

// ours keeps the pools of the master started by this test: other runs on the machine have theirs.
func ours(t *testing.T, pid int) []RunningPool {
	t.Helper()
	all, err := RunningPools("")
	if err != nil {
		t.Fatal(err)
	}
	var out []RunningPool
	for _, p := range all {
		if p.MasterPID == pid {
			out = append(out, p)
		}
	}
	return out
}

func TestRunningPoolsFindsARealMaster(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := stack.Start(ctx, stack.Config{AppFS: workloads.Demo(), NoNginx: true, Pools: []stack.Pool{
		{Name: "st", Listen: stack.ListenUnix, PM: "static", MaxChildren: 3, MaxRequests: 200},
		{Name: "dyn", Listen: stack.ListenTCP, PM: "dynamic", MaxChildren: 6}}})
	if err != nil {
		t.Fatalf("start stack (needs php8.2-fpm: make deps): %v", err)
	}
	defer s.Stop(context.Background())
	pid := s.PID("php-fpm")
	// A dynamic pool's master forks its start_servers after it answers: on a busy machine the second may come
	// between the read of /proc and the status page's. Read once both pools have all their workers.
	var pools []RunningPool
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		pools = ours(t, pid)
		if len(pools) != 2 || allStarted(ctx, pools) || time.Now().After(deadline) {
			break
		}
	}
	if len(pools) != 2 {
		t.Fatalf("found %d pools of master %d: %+v", len(pools), pid, pools)
	}
	for i, ep := range s.Pools {
		p := pools[i]
		if p.Name != ep.Name || p.Network != ep.Network || p.Address != ep.Address || p.StatusPath != ep.StatusPath ||
			p.PM != ep.PM || p.MaxChildren != ep.MaxChildren {
			t.Errorf("pool %d: found %+v, started %+v", i, p.FPMPoolConfig, ep)
		}
		if p.Config != filepath.Join(s.RunDir, "php-fpm.conf") || p.ConfigError != "" || !strings.HasPrefix(p.MasterTitle, "php-fpm: master process") {
			t.Errorf("pool %s: config %q (%s), title %q", p.Name, p.Config, p.ConfigError, p.MasterTitle)
		}
		st, err := ReadFPMStatus(ctx, ep.Network, ep.Address, ep.StatusPath)
		if err != nil {
			t.Fatal(err)
		}
		var pids []int
		for _, w := range st.Processes {
			pids = append(pids, w.PID)
		}
		slices.Sort(pids)
		if !slices.Equal(p.Workers, pids) {
			t.Errorf("pool %s: workers %v, the status page lists %v", p.Name, p.Workers, pids)
		}
		if p.Memory.Count != len(pids) || p.Memory.PeakUSS <= 0 || p.Memory.MeanUSS <= 0 || p.Memory.MeanUSS > p.Memory.PeakUSS ||
			p.Memory.Shared <= 0 || p.MasterUSS <= 0 || p.MemoryError != "" {
			t.Errorf("pool %s: memory %+v master %d (%s)", p.Name, p.Memory, p.MasterUSS, p.MemoryError)
		}
		if os.Geteuid() == 0 && (p.WorkerUID <= 0 || p.WorkerGID <= 0) {
			t.Errorf("pool %s: workers run as %d:%d, want www-data's ids", p.Name, p.WorkerUID, p.WorkerGID)
		}
	}
	if pools[0].MaxRequests != 200 {
		t.Errorf("max_requests %d", pools[0].MaxRequests)
	}

	// A master whose configuration cannot be read is still listed, from its workers' titles.
	if err := os.Rename(pools[0].Config, pools[0].Config+".moved"); err != nil {
		t.Fatal(err)
	}
	defer os.Rename(pools[0].Config+".moved", pools[0].Config)
	blind := ours(t, pid)
	if len(blind) != 2 || blind[0].Name != "st" || blind[1].Name != "dyn" || len(blind[0].Workers) != 3 {
		t.Fatalf("without its config: %+v", blind)
	}
	if blind[0].ConfigError == "" || blind[0].MaxChildren != 0 || blind[0].Memory.PeakUSS <= 0 {
		t.Errorf("without its config: %+v", blind[0])
	}
}

// allStarted says that every pool's workers are the ones its status page lists.
func allStarted(ctx context.Context, pools []RunningPool) bool {
	for _, p := range pools {
		st, err := ReadFPMStatus(ctx, p.Network, p.Address, p.StatusPath)
		if err != nil || len(st.Processes) != len(p.Workers) {
			return false
		}
	}
	return true
}
