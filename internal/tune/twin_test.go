package tune

import (
	"testing"
	"time"

	"github.com/phptune/phptune/internal/arms"
	"github.com/phptune/phptune/internal/knob"
)

// TestRacesRunOnTheirTwins: a knob that shapes the pool (pm, max_children) is raced on its own pool; the other
// throughput knobs on a static pool of the configuration's size, their own values kept; CPU knobs on a static
// pool of a worker a connection.
func TestRacesRunOnTheirTwins(t *testing.T) {
	tu, err := newTuner(Options{Base: knob.Debian(), Knobs: knob.All("preload.php", nil), Budget: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	tu.conc, tu.cpuConc = 12, 4
	base := knob.Debian()
	base.MaxChildren = 8
	seen := map[string]bool{}
	for _, k := range append(knob.All("preload.php", nil), knob.MaxChildren()) {
		spec := tu.specOf(k)
		for _, v := range k.Candidates(base) {
			cfg := base.Clone()
			if k.Set(&cfg, v) != nil {
				continue
			}
			run := arms.RunsOn(cfg, spec)
			if k.Get(run) != v {
				t.Errorf("%s=%s runs %s: the value under test is lost", k.Name, v, run)
			}
			switch {
			case spec.Metric == MetricCPU:
				if run.PM != "static" || run.MaxChildren != tu.cpuConc || !spec.Twin() {
					t.Errorf("CPU knob %s=%s runs %s", k.Name, v, run)
				}
			case k.Pool:
				if run.Key() != cfg.Key() || spec.Steady || spec.Twin() {
					t.Errorf("pool knob %s=%s runs %s, want %s itself", k.Name, v, run, cfg)
				}
			default:
				want := cfg.Clone()
				want.PM = "static"
				if run.Key() != want.Key() || !spec.Steady || spec.StartKind() != arms.StartStatic {
					t.Errorf("goodput knob %s=%s runs %s, want its steady twin %s", k.Name, v, run, want)
				}
			}
			seen[k.Name] = true
		}
	}
	for _, name := range []string{"pm", "max_children", "keepalive", "listen", "jit"} {
		if !seen[name] {
			t.Errorf("knob %s was not checked", name)
		}
	}
}

// TestMovedRaces: a race's second look goes on where it was raced unless what its arms measure has changed
// since: a CPU race does not move with the pool's size, a steady twin's race does, and any race moves with a
// knob its arms run with.
func TestMovedRaces(t *testing.T) {
	tu, err := newTuner(Options{Base: knob.Debian(), Knobs: knob.All("preload.php", nil), Budget: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	tu.conc, tu.cpuConc = 8, 4
	jit, _ := knob.ByName("jit")
	preload, _ := knob.ByName("preload")
	keepalive, _ := knob.ByName("keepalive")
	from := knob.Debian()
	from.MaxChildren = 8
	for _, c := range []struct {
		name  string
		k     knob.Knob
		adopt func(*knob.Config)
		want  bool
	}{
		{"CPU race, pool resized", preload, func(c *knob.Config) { c.MaxChildren = 2 }, false},
		{"CPU race, JIT adopted", preload, func(c *knob.Config) { jit.Set(c, "tracing") }, true},
		{"CPU race, its own value adopted", jit, func(c *knob.Config) { jit.Set(c, "tracing") }, false},
		{"steady race, pool resized", keepalive, func(c *knob.Config) { c.MaxChildren = 2 }, true},
		{"steady race, pm changed", keepalive, func(c *knob.Config) { c.PM = "ondemand" }, false},
	} {
		rc := &raced{r: race{knob: c.k, from: from.Clone()}, spec: tu.specOf(c.k)}
		tu.best = from.Clone()
		c.adopt(&tu.best)
		if got := tu.moved(rc); got != c.want {
			t.Errorf("%s: moved %v, want %v", c.name, got, c.want)
		}
	}
}
