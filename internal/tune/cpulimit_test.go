package tune

import (
	"testing"
	"time"

	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/measure"
)

// TestSizedForTheCPUQuota: on a host of 8 CPUs inside a quota of 1 CPU, what follows the CPUs follows the
// quota's: the CPU trials' load (2 connections a CPU, not the 12 the knee would take), the rule of thumb's pool (2
// a CPU) and nginx's workers. Sized for the host, it would be 12 connections, 16 children and 8 workers.
func TestSizedForTheCPUQuota(t *testing.T) {
	o := Options{Base: knob.Debian(), Knobs: knob.All("preload.php", nil), Budget: 10 * time.Minute}
	if err := o.SizeFor(measure.Limits{HostCPUs: 8, CPUQuota: 1, HostMemAvailable: 8 << 30}, 4<<30, "--memory 4GiB"); err != nil {
		t.Fatal(err)
	}
	tu, err := newTuner(o)
	if err != nil {
		t.Fatal(err)
	}
	tu.conc, tu.peakRPS = 12, 500
	if err := tu.fit(); err != nil {
		t.Fatal(err)
	}
	if tu.cpuConc != 2 || tu.plan.CPUConcurrency != 2 {
		t.Errorf("CPU trials at %d connections (plan %d), want 2 for 1 CPU", tu.cpuConc, tu.plan.CPUConcurrency)
	}
	if n := tu.ruleOfThumb().MaxChildren; n != 2 {
		t.Errorf("the rule of thumb's pool: %d children, want 2 for 1 CPU", n)
	}
	if o.Stack.NginxWorkers != 1 || tu.cpus() != 1 {
		t.Errorf("nginx's workers %d, CPUs %d: want 1 for 1 CPU", o.Stack.NginxWorkers, tu.cpus())
	}
}
