package gate

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/phptune/phptune/internal/stats"
)

// hasLatency says whether any comparison has a latency figure.
func (r *Result) hasLatency() bool {
	for _, c := range r.Comparisons {
		if c.Latency != nil {
			return true
		}
	}
	return false
}

// latencyTable writes the latency figure's table of the terminal summary.
func (r *Result) latencyTable(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  p99 at a fixed rate\treq/s\tp50 ms OLD\tNEW\tp99 ms OLD\tNEW\tchange\tinterval\tverdict")
	for _, c := range r.Comparisons {
		if l := c.Latency; l != nil {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.Name, perSecond(l.RatePerS), millis(l.OldP50Ms),
				millis(l.NewP50Ms), millis(l.OldP99Ms), millis(l.NewP99Ms), pct(l.Change), l.interval(c.Rounds), l.Says())
		}
	}
	tw.Flush()
}

// Says is what the latency figure means, in words: its verdict for the gate.
func (l *Latency) Says() string {
	switch l.Gate {
	case Worse:
		if l.OnErrors {
			return "worse (it fails requests)"
		}
		return "worse"
	case NotWorse:
		switch l.Verdict {
		case stats.Better:
			return "better"
		case stats.NoDifference:
			return "no difference"
		}
		return "not shown worse"
	}
	if l.LeansWorse {
		return "undecided (leans worse)"
	}
	return "undecided"
}

// interval is the latency change's interval, in percent, after rounds.
func (l *Latency) interval(rounds int) string { return interval(rounds, l.Lo, l.Hi) }

// millis is a latency in milliseconds.
func millis(ms float64) string {
	switch {
	case ms <= 0:
		return "-"
	case ms < 100:
		return fmt.Sprintf("%.1f", ms)
	}
	return fmt.Sprintf("%.0f", ms)
}

// perSecond is a rate in requests a second.
func perSecond(r float64) string {
	if r < 10 {
		return fmt.Sprintf("%.1f", r)
	}
	return fmt.Sprintf("%.0f", r)
}
