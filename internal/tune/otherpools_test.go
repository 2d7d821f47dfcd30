package tune

import (
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/measure"
)

func TestOtherPoolsKeepTheirGrowth(t *testing.T) {
	pool := func(name string, master, children, workers int, peak int64) measure.RunningPool {
		p := measure.RunningPool{MasterPID: master, Config: "/etc/php/8.2/fpm/php-fpm.conf"}
		p.Name, p.MaxChildren = name, children
		for i := 0; i < workers; i++ {
			p.Workers = append(p.Workers, master+1+i)
		}
		p.Memory.PeakUSS, p.Memory.MeanUSS = peak, peak/2
		return p
	}
	pools := []measure.RunningPool{pool("www", 100, 10, 3, 40<<20), pool("api", 200, 4, 4, 20<<20)}
	cgroups := map[int]string{100: "/system.slice/php8.2-fpm.service", 200: "/elsewhere"}
	of := func(pid int) string { return cgroups[pid] }
	all := OtherPools(pools, measure.Limits{}, false, of)
	if len(all) != 2 || all[0].Reserved != 7*40<<20 || all[1].Reserved != 0 {
		t.Fatalf("host-bound: %+v", all)
	}
	kept, line := Reserve(all)
	if kept != 7*40<<20 || !strings.Contains(line, "www (3 of 10 children at 40.0 MiB: 280.0 MiB kept)") || !strings.Contains(line, "api") {
		t.Errorf("reserve %d %q", kept, line)
	}
	in := OtherPools(pools, measure.Limits{Cgroup: "/system.slice"}, true, of)
	if len(in) != 1 || in[0].Name != "www" {
		t.Errorf("cgroup-bound: only the pool inside the cgroup counts, got %+v", in)
	}
	unread := pool("x", 300, 0, 0, 0)
	unread.ConfigError = "permission denied"
	if o := OtherPools([]measure.RunningPool{unread}, measure.Limits{}, false, of); len(o) != 1 || o[0].Reserved != 0 || o[0].Note == "" {
		t.Errorf("a pool whose configuration cannot be read: %+v", o)
	}
}

// TestSizeForMemoryGiven: --memory is the pool's memory as given, and the place's CPUs set nginx's workers.
func TestSizeForMemoryGiven(t *testing.T) {
	var o Options
	if err := o.SizeFor(measure.Limits{HostCPUs: 4}, 1<<30, "--memory 1GiB"); err != nil {
		t.Fatal(err)
	}
	if o.Memory != 1<<30 || o.MemoryFrom != "--memory 1GiB" || o.Limits == nil || o.Stack.NginxWorkers != 4 || o.OtherPools != nil {
		t.Errorf("options %+v", o)
	}
}
