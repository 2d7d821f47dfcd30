package gate

import (
	"fmt"
	"io"
	"strings"
)

// WriteAnnotations writes GitHub Actions' workflow commands: an error annotation for each comparison NEW is
// worse on, and a warning when the run is undecided, which the job's summary and its pull request show.
func (r *Result) WriteAnnotations(w io.Writer) error {
	var b strings.Builder
	for _, c := range r.Comparisons {
		if c.Gate != Worse {
			continue
		}
		if c.cpuGate() == Worse {
			msg := fmt.Sprintf("NEW costs %s CPU a request against OLD, %s (%s us -> %s us, %d rounds)", pct(c.Change),
				c.Interval(), micros(c.OldUs), micros(c.NewUs), c.Rounds)
			if c.OnErrors {
				msg = "NEW fails requests that OLD serves; " + msg
			}
			fmt.Fprintf(&b, "::error title=%s::%s\n", ghProperty("phptune gate: "+c.Name+" is slower"), ghData(msg))
		}
		if l := c.Latency; l != nil && l.Gate == Worse {
			msg := fmt.Sprintf("NEW's p99 latency at %s requests/s is %s against OLD's, %s (%s ms -> %s ms, %d rounds)",
				perSecond(l.RatePerS), pct(l.Change), l.interval(c.Rounds), millis(l.OldP99Ms), millis(l.NewP99Ms), c.Rounds)
			fmt.Fprintf(&b, "::error title=%s::%s\n", ghProperty("phptune gate: "+c.Name+" is slower (p99 latency)"),
				ghData(msg))
		}
	}
	if r.Outcome == Undecided {
		fmt.Fprintf(&b, "::warning title=%s::%s\n", ghProperty("phptune gate: undecided"), ghData(r.Headline()+
			"; a longer --budget decides more"))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// ghData escapes a workflow command's message (GitHub's toolkit: escapeData).
func ghData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// ghProperty escapes a workflow command's property (escapeProperty): its separators too.
func ghProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}
