package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/phptune/phptune/internal/profile"
)

// profileSyscallRows is how many syscalls the terminal table shows (all are in the JSON).
const profileSyscallRows = 15

// Profile writes the variants side by side: syscalls, instructions, memory, opcache, huge pages, per request.
func Profile(w io.Writer, r *profile.Result) {
	if r.Partial {
		fmt.Fprintf(w, "PARTIAL: the run stopped early; these are the results so far\n\n")
	}
	fmt.Fprintf(w, "phptune profile: %s, %d URL(s), %s\n", r.App, len(r.URLs), secs(r.ElapsedS))
	var ok []profile.VariantResult
	for _, v := range r.Variants {
		if v.Error != "" {
			fmt.Fprintln(w)
			wrapTo(w, "  ", "    ", v.Name+" FAILED: "+v.Error)
			continue
		}
		ok = append(ok, v)
	}
	for _, v := range r.Variants {
		if v.Config != "" {
			fmt.Fprintf(w, "  %-14s %s\n", v.Name+":", v.Config)
		}
	}
	if len(ok) == 0 {
		return
	}
	t := &table{w: w, cols: len(ok)}
	head := []string{}
	for _, v := range ok {
		head = append(head, v.Name)
	}
	diff := len(ok) > 1

	if ok[0].TracedRequests > 0 {
		fmt.Fprintf(w, "\n  System calls per request (strace -c on the pool, %d requests)\n", ok[0].TracedRequests)
		t.header(head, diff)
		vals := make([]float64, len(ok))
		for i, v := range ok {
			vals[i] = v.SyscallsPerReq
		}
		t.row("all", vals, num1, diff)
		sub := &profile.Result{Variants: ok}
		rows := sub.SyscallRows()
		for i, d := range rows {
			if i == profileSyscallRows {
				fmt.Fprintf(w, "  %-24s (%d more in the JSON)\n", "...", len(rows)-i)
				break
			}
			t.row(d.Name, d.Values, num1, diff)
		}
		for i, v := range ok {
			vals[i] = v.SyscallErrorsPerReq
		}
		t.row("failed calls", vals, num1, diff)
	}

	if len(ok[0].Instructions) > 0 {
		ir := ok[0].Instructions[0].InstrResult
		fmt.Fprintf(w, "\n  Instructions per request (callgrind, php-cgi -T %d: median of the last %d)\n", ir.Warmup+ir.N, ir.N)
		t.header(head, diff)
		for u := range ok[0].Instructions {
			vals := make([]float64, len(ok))
			for i, v := range ok {
				if u < len(v.Instructions) {
					vals[i] = float64(v.Instructions[u].PerRequest)
				}
			}
			t.row(ok[0].Instructions[u].URI, vals, count, diff)
		}
		if len(ok[0].Instructions) > 1 {
			vals := make([]float64, len(ok))
			for i, v := range ok {
				vals[i] = v.InstructionsPerReq
			}
			t.row("weighted mix", vals, count, diff)
		}
		for _, v := range ok {
			if v.InstructionsOf != "" {
				fmt.Fprintf(w, "  (%s has %s's PHP settings: the same counts)\n", v.Name, v.InstructionsOf)
			}
		}
	}

	if len(ok[0].Workers) > 0 {
		fmt.Fprintf(w, "\n  Memory per worker\n")
		t.header(head, false)
		vals := make([]float64, len(ok))
		for i, v := range ok {
			vals[i] = float64(len(v.Workers))
		}
		t.row("workers", vals, num0, false)
		for i, v := range ok {
			vals[i] = float64(v.MeanPSS)
		}
		t.row("PSS (mean)", vals, mibs, false)
		for i, v := range ok {
			vals[i] = float64(v.MeanUSS)
		}
		t.row("USS (mean)", vals, mibs, false)
		for i, v := range ok {
			vals[i] = 0
			for _, wm := range v.Workers {
				vals[i] = max(vals[i], float64(wm.USS))
			}
		}
		t.row("USS (largest)", vals, mibs, false)
	}

	fmt.Fprintf(w, "\n  opcache\n")
	t.header(head, false)
	t.text("enabled", ok, func(v profile.VariantResult) string {
		if v.Opcache == nil {
			return "?"
		}
		if v.Opcache.Enabled {
			return "yes"
		}
		return "no"
	})
	t.text("memory used/free", ok, func(v profile.VariantResult) string {
		if o := v.Opcache; o != nil && o.Enabled {
			return fmt.Sprintf("%.1f/%.1f MiB", float64(o.MemoryUsed)/(1<<20), float64(o.MemoryFree)/(1<<20))
		}
		return "-"
	})
	t.text("wasted", ok, func(v profile.VariantResult) string {
		if o := v.Opcache; o != nil && o.Enabled {
			return fmt.Sprintf("%.1f MiB (%.1f%%)", float64(o.MemoryWasted)/(1<<20), o.WastedPct)
		}
		return "-"
	})
	t.text("keys used/max", ok, func(v profile.VariantResult) string {
		if o := v.Opcache; o != nil && o.Enabled {
			return fmt.Sprintf("%d/%d", o.CachedKeys, o.MaxCachedKeys)
		}
		return "-"
	})
	t.text("interned strings", ok, func(v profile.VariantResult) string {
		if o := v.Opcache; o != nil && o.Enabled {
			return fmt.Sprintf("%.1f/%.0f MiB", float64(o.InternedUsed)/(1<<20), float64(o.InternedBuffer)/(1<<20))
		}
		return "-"
	})
	t.text("hit rate", ok, func(v profile.VariantResult) string {
		if o := v.Opcache; o != nil && o.Enabled && o.Hits+o.Misses > 0 {
			return fmt.Sprintf("%.2f%%", o.HitRate)
		}
		return "-"
	})

	if ok[0].HugePages != nil {
		fmt.Fprintf(w, "\n  Huge pages\n")
		t.header(head, false)
		t.text("PHP text", ok, func(v profile.VariantResult) string {
			if h := v.HugePages; h != nil {
				return fmt.Sprintf("%.1f of %.1f MiB", float64(h.TextHugeBytes)/(1<<20), float64(h.TextBytes)/(1<<20))
			}
			return "-"
		})
		t.text("opcache segment", ok, func(v profile.VariantResult) string {
			if h := v.HugePages; h != nil && h.OpcacheBytes > 0 {
				return fmt.Sprintf("%.0f of %.0f MiB", float64(h.OpcacheHugeBytes)/(1<<20), float64(h.OpcacheBytes)/(1<<20))
			}
			return "-"
		})
		h := ok[0].HugePages
		fmt.Fprintf(w, "  system: THP %s, %d reserved huge pages (%d free) of %d KiB\n", unset(h.THP), h.HugePagesTotal, h.HugePagesFree, h.HugePageSize>>10)
	}

	// The first URL's top functions per variant (every URL's are in the JSON).
	for _, v := range ok {
		if len(v.Instructions) == 0 || len(v.Instructions[0].Functions) == 0 {
			continue
		}
		ui := v.Instructions[0]
		fmt.Fprintf(w, "\n  Top functions of %s, %s (instructions per request: inclusive, self)\n", v.Name, ui.URI)
		for _, f := range ui.Functions {
			name := f.Name
			if strings.HasPrefix(name, "0x") && f.Object != "" {
				name += " in " + f.Object // a static function of a stripped binary
			}
			fmt.Fprintf(w, "    %12s %12s  %s\n", count(f.Inclusive), count(f.Self), name)
		}
	}
	for _, v := range ok {
		wt := v.Wall
		if wt == nil {
			continue
		}
		fmt.Fprintf(w, "\n  Wall time of %s (excimer, %g ms samples, %d requests): %.2f ms a request, %.2f ms of it CPU\n",
			v.Name, wt.PeriodMs, wt.Requests, wt.WallMs, wt.CPUMs)
		fmt.Fprintf(w, "    %10s %10s %10s  %s\n", "wall ms", "CPU ms", "self wall", "function (inclusive, per request)")
		for _, f := range wt.Functions {
			fmt.Fprintf(w, "    %10.2f %10.2f %10.2f  %s\n", f.WallMs, f.CPUMs, f.SelfWallMs, f.Name)
		}
	}
	for _, v := range ok {
		if v.Slowlog == nil {
			continue
		}
		fmt.Fprintf(w, "\n  Slowlog of %s: %d of %d requests over %.0f s\n", v.Name, v.Slowlog.Entries, v.Slowlog.Requests, v.Slowlog.Timeout)
		for _, tr := range v.Slowlog.Traces {
			for _, l := range strings.Split(tr, "\n") {
				fmt.Fprintf(w, "    %s\n", l)
			}
		}
	}
	for _, v := range ok {
		var advice []string
		advice = append(advice, v.Warnings...)
		if v.HugePages != nil {
			advice = append(advice, v.HugePages.Advice...)
		}
		if len(advice) > 0 {
			fmt.Fprintf(w, "\n  %s:\n", v.Name)
			for _, a := range advice {
				wrapTo(w, "    - ", "      ", a)
			}
		}
	}
}

type table struct {
	w    io.Writer
	cols int
}

const labelWidth, colWidth = 24, 16

func (t *table) header(names []string, diff bool) {
	fmt.Fprintf(t.w, "  %-*s", labelWidth, "")
	for i, n := range names {
		fmt.Fprintf(t.w, " %*s", colWidth+boolInt(diff && len(names) > 2 && i > 0)*6, trim(n, colWidth))
	}
	if diff && len(names) == 2 {
		fmt.Fprintf(t.w, " %*s", colWidth, "difference")
	}
	fmt.Fprintln(t.w)
}

// row prints the values; with diff and two variants, the second's difference from the first (absolute, and in %
// when the first is not zero) in a column of its own; with more, each variant's difference beside its value.
func (t *table) row(label string, vals []float64, f func(float64) string, diff bool) {
	fmt.Fprintf(t.w, "  %-*s", labelWidth, trim(label, labelWidth))
	for i, v := range vals {
		cell := f(v)
		if diff && len(vals) > 2 && i > 0 {
			if d := v - vals[0]; f(d) != f(0) && f(d) != f(-0.0) {
				sign := ""
				if d > 0 {
					sign = "+"
				}
				cell += " (" + sign + f(d) + ")"
			}
		}
		fmt.Fprintf(t.w, " %*s", colWidth+boolInt(diff && len(vals) > 2 && i > 0)*6, cell)
	}
	if diff && len(vals) == 2 {
		d := vals[len(vals)-1] - vals[0]
		s := f(d)
		if d > 0 {
			s = "+" + s
		}
		if vals[0] != 0 {
			s += fmt.Sprintf(" (%+.0f%%)", 100*d/vals[0])
		}
		fmt.Fprintf(t.w, " %*s", colWidth, s)
	}
	fmt.Fprintln(t.w)
}

func (t *table) text(label string, vs []profile.VariantResult, f func(profile.VariantResult) string) {
	fmt.Fprintf(t.w, "  %-*s", labelWidth, label)
	for _, v := range vs {
		fmt.Fprintf(t.w, " %*s", colWidth, f(v))
	}
	fmt.Fprintln(t.w)
}

func trim(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "~"
}

func num0(v float64) string { return fmt.Sprintf("%.0f", v) }
func num1(v float64) string { return fmt.Sprintf("%.1f", v) }
func mibs(v float64) string { return fmt.Sprintf("%.1f MiB", v/(1<<20)) }

// count shows an instruction count: exact below a million, then in M with three decimals.
func count(v float64) string {
	a := v
	if a < 0 {
		a = -a
	}
	switch {
	case a >= 1e9:
		return fmt.Sprintf("%.3f G", v/1e9)
	case a >= 1e6:
		return fmt.Sprintf("%.3f M", v/1e6)
	}
	return fmt.Sprintf("%.0f", v)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
