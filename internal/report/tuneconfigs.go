package report

import (
	"sort"
	"strings"

	"github.com/phptune/phptune/internal/tune"
)

// configRow is one configuration at one load, with one figure a metric: the table "Configurations measured",
// the latency chart and the headline all print these. The three configurations of the final comparison have
// their throughput and latency from its interleaved rounds (the headline's figures); the others from their
// trials in the races.
type configRow struct {
	Name, Config string
	Load         int  // connections
	Final        bool // throughput and latency from the final comparison's rounds
	// Goodput is the median of the throughput trials' requests served per second; GoodputTrials how many.
	Goodput       float64
	GoodputTrials int
	// PerCPU is the median of the CPU trials' requests per CPU-second; CPUTrials how many.
	PerCPU    float64
	CPUTrials int
	// Capacity is the median of the throughput trials' requests per CPU-second of php-fpm and nginx.
	Capacity float64
	// Latency percentiles: medians of the throughput trials' own (closed loop at Load).
	P50, P90, P99, P999 float64
	NginxCPU            float64 // µs a request, sampled in the throughput trials
	Requests, Errors    int64
}

// configName names a configuration for a reader: what it is in the final comparison, else how it differs
// from the recommendation.
type configNamer struct {
	rec, base, rule, baseName string
	final                     bool
}

func namerOf(r *tune.Result) configNamer {
	n := configNamer{rec: r.Recommendation.String(), base: r.Baseline.String(), baseName: "Debian's defaults"}
	if h := r.Headline; h != nil {
		n.rule, n.final = h.RuleOfThumb, true
		if h.Baseline != "" {
			n.baseName = h.Baseline
		}
	}
	return n
}

func (n configNamer) name(cfg string) string {
	var names []string
	if cfg == n.rec && n.final {
		names = append(names, "recommendation")
	}
	if cfg == n.base {
		names = append(names, n.baseName)
	}
	if cfg == n.rule && n.rule != "" {
		names = append(names, "rule of thumb")
	}
	if len(names) > 0 {
		return strings.Join(names, " = ")
	}
	if d := diffTokens(cfg, n.rec); len(d) > 0 {
		return shownConfig(strings.Join(d, " "))
	}
	return shownConfig(cfg)
}

// rank puts the final comparison's configurations first.
func (n configNamer) rank(cfg string) int {
	switch {
	case cfg == n.rec:
		return 0
	case cfg == n.base:
		return 1
	case cfg == n.rule && n.rule != "":
		return 2
	}
	return 3
}

// configRows groups r's trials after the sweep by configuration and load.
func configRows(r *tune.Result) []configRow {
	n := namerOf(r)
	type key struct {
		cfg  string
		load int
	}
	type acc struct {
		row               configRow
		final, races      []tune.TrialRecord // throughput trials
		cpuFinal, cpuRace []float64          // CPU trials' requests per CPU-second
	}
	byKey := map[key]*acc{}
	var order []key
	for _, t := range r.Trials {
		if t.Phase == "saturation" || (t.Duet && t.Metric == tune.MetricGoodput) {
			continue // a split round's duet: its goodput is what its rivals left it
		}
		k := key{t.Config, t.Concurrency}
		a := byKey[k]
		if a == nil {
			a = &acc{row: configRow{Name: n.name(t.Config), Config: t.Config, Load: t.Concurrency}}
			byKey[k] = a
			order = append(order, k)
		}
		switch {
		case t.Metric == tune.MetricCPU && t.Phase == "final":
			a.cpuFinal = append(a.cpuFinal, t.Value)
		case t.Metric == tune.MetricCPU:
			a.cpuRace = append(a.cpuRace, t.Value)
		case t.Phase == "final":
			a.final = append(a.final, t)
		default:
			a.races = append(a.races, t)
		}
	}
	// The final comparison's first, each at the final's load before any other it ran at.
	final := func(k key) int {
		if len(byKey[k].final) > 0 {
			return 0
		}
		return 1
	}
	sort.SliceStable(order, func(i, j int) bool {
		ri, rj := n.rank(order[i].cfg), n.rank(order[j].cfg)
		if ri != rj {
			return ri < rj
		}
		return final(order[i]) < final(order[j])
	})
	out := make([]configRow, 0, len(order))
	for _, k := range order {
		a := byKey[k]
		row := a.row
		tp := a.races
		if len(a.final) > 0 {
			tp, row.Final = a.final, true
		}
		cpu := a.cpuRace
		if len(a.cpuFinal) > 0 { // as for goodput: a final that measures CPU is the headline's figure
			cpu, row.Final = a.cpuFinal, true
		}
		row.PerCPU, row.CPUTrials = med(cpu), len(cpu)
		row.GoodputTrials = len(tp)
		var good, p50, p90, p99, p999, ngx, capa []float64
		for _, t := range tp {
			good = append(good, t.Goodput)
			if t.ReqPerCPUS > 0 {
				capa = append(capa, t.ReqPerCPUS)
			}
			row.Requests += t.Requests
			row.Errors += t.Errors
			if t.Requests > 0 {
				p50, p90, p99, p999 = append(p50, t.Latency.P50), append(p90, t.Latency.P90), append(p99, t.Latency.P99), append(p999, t.Latency.P999)
			}
			if v, ok := t.ServerCPU["nginx"]; ok {
				ngx = append(ngx, v)
			}
		}
		row.Goodput, row.P50, row.P90, row.P99, row.P999, row.NginxCPU = med(good), med(p50), med(p90), med(p99), med(p999), med(ngx)
		row.Capacity = med(capa)
		out = append(out, row)
	}
	return out
}

// memRow is one configuration's worker memory, over every trial it ran (the sweep's pools apart).
type memRow struct {
	Name, Config     string
	PeakUSS, MeanPSS int64
	Loads            []int
}

// memRows are the configurations whose workers' memory was read, the sweep's pools last.
func memRows(r *tune.Result) []memRow {
	n := namerOf(r)
	type acc struct {
		row   memRow
		pss   []float64
		sweep bool
	}
	byKey := map[string]*acc{}
	var order []string
	for _, t := range r.Trials {
		if t.WorkerUSS <= 0 {
			continue
		}
		sweep := t.Phase == "saturation"
		k := t.Config
		if sweep {
			k = "sweep " + k
		}
		a := byKey[k]
		if a == nil {
			name := n.name(t.Config)
			if sweep {
				name = "saturation sweep, " + poolOf(t.Config)
			}
			a = &acc{row: memRow{Name: name, Config: t.Config}, sweep: sweep}
			byKey[k] = a
			order = append(order, k)
		}
		a.row.PeakUSS = max(a.row.PeakUSS, t.WorkerUSS)
		if t.WorkerPSS > 0 {
			a.pss = append(a.pss, float64(t.WorkerPSS))
		}
		if !containsInt(a.row.Loads, t.Concurrency) {
			a.row.Loads = append(a.row.Loads, t.Concurrency)
		}
	}
	sort.SliceStable(order, func(i, j int) bool {
		ai, aj := byKey[order[i]], byKey[order[j]]
		if ai.sweep != aj.sweep {
			return aj.sweep
		}
		return n.rank(ai.row.Config) < n.rank(aj.row.Config)
	})
	var out []memRow
	for _, k := range order {
		a := byKey[k]
		a.row.MeanPSS = int64(med(a.pss))
		sort.Ints(a.row.Loads)
		out = append(out, a.row)
	}
	return out
}

// poolOf names a configuration's pool by its size: "pool of 32".
func poolOf(cfg string) string {
	for _, t := range strings.Fields(cfg) {
		if v, ok := strings.CutPrefix(t, "max_children="); ok {
			return "pool of " + v
		}
	}
	return cfg
}

func containsInt(list []int, v int) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}
