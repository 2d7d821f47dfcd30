package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/phptune/phptune/internal/check"
)

// lineWidth is the terminal summary's widest line.
const lineWidth = 120

// Check writes check's answer: per pool what was measured, then its problems with their evidence, the changes
// suggested with the tune command that would verify each, and what could not be read.
func Check(w io.Writer, r *check.Result) {
	if r.Partial {
		fmt.Fprintf(w, "PARTIAL: interrupted after %s of %s; these are the results so far\n\n", secs(r.ElapsedS), secs(r.ForS))
	}
	fmt.Fprintf(w, "phptune check: %d pool(s), %s at %s intervals\n", len(r.Pools), secs(r.ElapsedS), secs(r.IntervalS))
	for _, p := range r.Pools {
		checkPool(w, p)
	}
	if len(r.Skipped) > 0 {
		fmt.Fprintf(w, "\nNot sampled\n")
		for _, s := range r.Skipped {
			wrapTo(w, "  - ", "    ", fmt.Sprintf("pool %s (%s): %s. %s", s.Pool, s.Target, s.Why, s.Fix))
		}
	}
	for _, warn := range r.Warnings {
		wrapTo(w, "warning: ", "  ", warn)
	}
	switch n := r.Problems(); {
	case len(r.Pools) == 0:
	case n == 0:
		fmt.Fprintf(w, "\nNo problem found.\n")
	default:
		fmt.Fprintf(w, "\n%d problem(s) found.\n", n)
	}
}

func checkPool(w io.Writer, p *check.Pool) {
	where := p.Address
	if p.Network == "tcp" {
		where = "tcp:" + p.Address
	}
	fmt.Fprintf(w, "\npool %s  %s", p.Name, where)
	var from []string
	if p.MasterPID > 0 {
		from = append(from, fmt.Sprintf("master %d", p.MasterPID))
	}
	if f := p.PoolFile; f != "" {
		from = append(from, f)
	}
	if len(from) > 0 {
		fmt.Fprintf(w, "  (%s)", strings.Join(from, ", "))
	}
	fmt.Fprintln(w)
	s := p.Settings
	mc, mr := "unknown", "unknown"
	if s.MaxChildren > 0 {
		mc = fmt.Sprint(s.MaxChildren)
	}
	if s.Known {
		mr = fmt.Sprint(s.MaxRequests)
	}
	failed := ""
	if p.StatusFailed > 0 {
		failed = fmt.Sprintf(", %d failed", p.StatusFailed)
	}
	fmt.Fprintf(w, "  pm %s, max_children %s, max_requests %s; %d status reads, %d unanswered%s\n", orDash(s.PM), mc, mr, p.Samples,
		p.StatusMissed, failed)
	row := func(label, text string) { wrapTo(w, fmt.Sprintf("  %-9s ", label), strings.Repeat(" ", 12), text) }
	t := p.Traffic
	row("Traffic", fmt.Sprintf("%s requests, %s/s; max_children reached %d time(s) (%d since the pool started); %d slow (php-fpm's count)",
		group(t.Accepted), rate(t.PerSecond), t.MaxChildrenReached, t.MaxChildrenReachedTotal, t.SlowRequests))
	b := p.Busy
	row("Workers", fmt.Sprintf("busy: peak %d, p95 %s, mean %s of max_children %s (all busy in %.0f%% of samples); up to %d running", b.Peak,
		fnum(b.P95), fnum(b.Mean), mc, 100*b.AtLimit, b.Workers))
	if h := p.Held; h != nil {
		row("Held", fmt.Sprintf("%d of %d workers held while the status page went unanswered (from /proc): %s", h.Busy, h.Workers, h.Doing()))
	}
	q := p.Queue
	row("Queue", fmt.Sprintf("peak %d of backlog %d, connections waiting in %.0f%% of %d samples; a request waited p50 %s ms, p95 %s ms", q.Peak,
		q.Backlog, 100*q.NonZero, p.QueueSamples, fnum(q.StatusWaitP50), fnum(q.StatusWaitP95)))
	m := p.Memory
	mem := fmt.Sprintf("a worker %s private at most (mean %s), %s shared; the pool %s now", bytesLabel(float64(m.MaxUSS)),
		bytesLabel(float64(m.MeanUSS)), bytesLabel(float64(m.Shared)), bytesLabel(float64(m.Now)))
	if m.AtMaxChildren > 0 {
		mem += fmt.Sprintf(", %s at max_children", bytesLabel(float64(m.AtMaxChildren)))
	}
	if m.Budget > 0 {
		mem += fmt.Sprintf(" against %s it has (room for %d workers)", bytesLabel(float64(m.Budget)), m.Fits)
	}
	row("Memory", mem)
	if g := p.Growth; g != nil {
		row("Growth", fmt.Sprintf("%s a request (at least %s) over %s requests of %d workers, %d of them growing", bytesLabel(g.PerRequest),
			bytesLabel(g.Lower), group(g.Requests), g.Workers, g.Growing))
	}
	if c := p.CPU; c != nil && c.Of > 0 {
		row("CPU", fmt.Sprintf("%s of %d CPUs (%s s)", fnum(c.Cores), c.Of, fnum(c.UsedS)))
	}
	if o := p.Opcache.Last; o != nil {
		text := "off"
		if o.Enabled {
			total := o.MemoryUsed + o.MemoryFree + o.MemoryWasted
			text = fmt.Sprintf("%s of %s used (%s wasted), %s of %s keys, %s of %s interned strings", bytesLabel(float64(o.MemoryUsed)),
				bytesLabel(float64(total)), bytesLabel(float64(o.MemoryWasted)), group(o.CachedKeys), group(o.MaxCachedKeys),
				bytesLabel(float64(o.InternedUsed)), bytesLabel(float64(o.InternedBuffer)))
			if c := p.Opcache; c.WindowHitRate > 0 {
				text += fmt.Sprintf(", hit rate %s%% in the window", fnum(c.WindowHitRate))
			} else {
				text += fmt.Sprintf(", hit rate %s%% since start", fnum(o.HitRate))
			}
			if n := p.Opcache.OOMRestarts + p.Opcache.HashRestarts; n > 0 {
				text += fmt.Sprintf(", %d restart(s)", n)
			}
		}
		row("Opcache", text)
	}
	if len(p.Findings) > 0 {
		fmt.Fprintf(w, "\n  PROBLEMS\n")
		for _, f := range p.Findings {
			wrapTo(w, "  x ", "    ", f.Title)
			for _, e := range f.Evidence {
				wrapTo(w, "      ", "        ", e)
			}
		}
	}
	if len(p.Suggestions) > 0 {
		fmt.Fprintf(w, "\n  SUGGESTIONS (verify each with tune before applying it)\n")
		for _, s := range p.Suggestions {
			wrapTo(w, "  > ", "    ", fmt.Sprintf("%s %s -> %s: %s", s.Setting, s.Current, s.Suggested, s.Why))
			wrapTo(w, "      verify: ", "        ", s.Verify)
		}
	}
	if len(p.Notes) > 0 {
		fmt.Fprintf(w, "\n  Notes\n")
		for _, n := range p.Notes {
			wrapTo(w, "  - ", "    ", n)
		}
	}
}

// wrapTo writes text after first, wrapped at lineWidth with the next lines after indent.
func wrapTo(w io.Writer, first, indent, text string) {
	prefix := first
	line := prefix
	for _, word := range strings.Fields(text) {
		if len(line) > len(prefix) && len(line)+1+len(word) > lineWidth {
			fmt.Fprintln(w, line)
			prefix = indent
			line = prefix
		}
		if len(line) > len(prefix) {
			line += " "
		}
		line += word
	}
	fmt.Fprintln(w, line)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
