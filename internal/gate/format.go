package gate

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/phptune/phptune/internal/experiment"
	"github.com/phptune/phptune/internal/stats"
)

// Headline is the run's answer in one line.
func (r *Result) Headline() string {
	switch r.Outcome {
	case Worse:
		var names []string
		for _, c := range r.Comparisons {
			if c.Gate == Worse {
				names = append(names, fmt.Sprintf("%s (%s)", c.Name, c.worseBy()))
			}
		}
		return "NEW is worse than OLD: " + strings.Join(names, ", ")
	case NotWorse:
		return "NEW is not worse than OLD"
	}
	return "undecided: NEW was neither shown worse than OLD nor shown not worse in the budget"
}

// worseBy says by how much NEW is worse on each figure it is shown worse on.
func (c Comparison) worseBy() string {
	var parts []string
	if c.cpuGate() == Worse {
		parts = append(parts, pct(c.Change)+" CPU")
	}
	if c.Latency != nil && c.Latency.Gate == Worse {
		parts = append(parts, pct(c.Latency.Change)+" p99")
	}
	return strings.Join(parts, " and ")
}

// cpuGate is what c's CPU figure means for the gate (a result without CPUGate: its Gate).
func (c Comparison) cpuGate() string {
	if c.CPUGate == "" {
		return c.Gate
	}
	return c.CPUGate
}

// Says is what c's CPU figure means, in words: its verdict for the gate.
func (c Comparison) Says(minEffect float64) string {
	switch c.cpuGate() {
	case Worse:
		if c.OnErrors {
			return "worse (it fails requests)"
		}
		return "worse"
	case NotWorse:
		switch c.Verdict {
		case stats.Better:
			return "better"
		case stats.NoDifference:
			return "no difference"
		}
		return "not worse (below +" + share(minEffect) + ")"
	}
	if c.Ended == "not raced" {
		return "undecided (not raced: the budget ended first)"
	}
	if c.RoundsNeeded >= experiment.MaxRoundsNeeded {
		return "undecided (the change is about the minimum effect)"
	}
	if c.RoundsNeeded > c.Rounds {
		return fmt.Sprintf("undecided (about %d more rounds)", c.RoundsNeeded-c.Rounds)
	}
	return "undecided"
}

// Interval is c's interval of the change, in percent.
func (c Comparison) Interval() string { return interval(c.Rounds, c.Lo, c.Hi) }

// interval is [lo, hi] in percent, after rounds.
func interval(rounds int, lo, hi float64) string {
	if rounds < 2 || hi >= math.Expm1(experiment.Unbounded) {
		return "(too few rounds)"
	}
	return fmt.Sprintf("[%s, %s]", pct(lo), pct(hi))
}

// pct is a relative change in percent with its sign: whole percents from 10% on.
func pct(x float64) string {
	if math.Abs(x) >= 0.1 {
		return fmt.Sprintf("%+.0f%%", 100*x)
	}
	return fmt.Sprintf("%+.1f%%", 100*x)
}

// share is a fraction in percent, as the flags take it (3%).
func share(x float64) string { return strconv.FormatFloat(100*x, 'g', 3, 64) + "%" }

// micros is a CPU time a request.
func micros(us float64) string {
	if us <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f", us)
}

// method is the paragraph that says what was measured and how sure it is.
func (r *Result) method() string {
	budget := time.Duration(r.BudgetS * float64(time.Second))
	elapsed := time.Duration(r.ElapsedS * float64(time.Second)).Round(100 * time.Millisecond)
	s := fmt.Sprintf("php-fpm's CPU time a request, NEW (%s) against OLD (%s), in %d duet rounds on fresh stacks (both "+
		"versions at once, %s); %s of a %s budget. A change counts from %s; the intervals hold together at "+
		"%.0f%% (one error budget over %d comparisons).", where(r.New), where(r.Old), r.Rounds, r.connections(), elapsed,
		budget, share(r.MinEffect), 100*(1-r.Alpha), len(r.Comparisons))
	if r.hasLatency() {
		s += " Each round also sent both versions at once a fixed rate of requests (half the slower version's throughput " +
			"in the comparison's first round) and compared their p99 latency on its own interval, half of each " +
			"comparison's share: NEW is worse when either figure is shown worse."
	}
	if r.Partial {
		s += " Interrupted: the results so far."
	}
	for _, w := range r.Warnings {
		s += " Note: " + w + "."
	}
	return s
}

// connections says how many connections loaded each version, and why when more than a page that computes gets.
func (r *Result) connections() string {
	if r.Connections > DefaultConnections {
		return fmt.Sprintf("%d connections each, as many as a page that waits needs", r.Connections)
	}
	return fmt.Sprintf("%d connections each", r.Connections)
}

// where names a version: its revision, else its directory.
func where(v Version) string {
	if v.Rev != "" {
		return shortRev(v.Rev)
	}
	return v.Dir
}

func shortRev(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}

// WriteText writes the terminal summary.
func (r *Result) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "phptune gate: %s\n\n", r.Headline())
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  \tCPU us/req OLD\tNEW\tchange\tinterval\tverdict\trounds")
	for _, c := range r.Comparisons {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%d\n", c.Name, micros(c.OldUs), micros(c.NewUs), pct(c.Change), c.Interval(),
			c.Says(r.MinEffect), c.Rounds)
	}
	tw.Flush()
	if r.hasLatency() {
		b.WriteString("\n")
		r.latencyTable(&b)
	}
	b.WriteString("\n")
	b.WriteString(wrap(r.method(), "  ", 116))
	_, err := io.WriteString(w, b.String())
	return err
}

// wrap breaks s into lines of at most width columns: the first after indent, the others two columns further in.
func wrap(s, indent string, width int) string {
	var b strings.Builder
	line, lead := "", indent
	for _, word := range strings.Fields(s) {
		if line != "" && len(lead)+len(line)+1+len(word) > width {
			b.WriteString(lead + line + "\n")
			line, lead = "", indent+"  "
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	return b.String() + lead + line + "\n"
}
