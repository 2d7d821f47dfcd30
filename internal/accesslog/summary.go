package accesslog

import (
	"fmt"
	"io"
	"strings"
)

// Summary writes the mix as a person reads it: one line of counts (lines read, parsed, unparseable
// with the first one shown, dropped by reason, kept), then one line per route: share, requests, mean
// time when known, why, pattern and its examples with weights.
func (m *Mix) Summary(w io.Writer) {
	fmt.Fprintln(w, m.countsLine())
	for _, r := range m.Routes {
		fmt.Fprintln(w, m.routeLine(r))
	}
}

func (m *Mix) countsLine() string {
	var b strings.Builder
	fmt.Fprintf(&b, "access log %s (%s): %d lines, %d parsed", m.filesName(), m.Format, m.Lines, m.Lines-m.Unparsed)
	if m.Unparsed > 0 {
		bad := m.FirstBad[0]
		fmt.Fprintf(&b, ", %d unparseable (first: %s:%d %q)", m.Unparsed, bad.File, bad.Line, clip(bad.Text, 80))
	}
	var drops []string
	for r := byNoRequest; r < nReasons; r++ {
		if n := m.Dropped[reasons[r].key]; n > 0 {
			drops = append(drops, fmt.Sprintf("%d %s", n, reasons[r].what))
		}
	}
	if len(drops) > 0 {
		fmt.Fprintf(&b, ", dropped %s", strings.Join(drops, ", "))
	}
	fmt.Fprintf(&b, "; kept %d, %d routes chosen cover %.1f%%", m.Kept, len(m.Routes), m.Covered*100)
	return b.String()
}

func (m *Mix) filesName() string {
	if len(m.Files) == 1 {
		return m.Files[0]
	}
	return fmt.Sprintf("%d files", len(m.Files))
}

func (m *Mix) routeLine(r Route) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  %5.1f%% %8d req", r.Share*100, r.Count)
	if m.HasTime {
		fmt.Fprintf(&b, " %9s", millis(r.MeanTime))
	}
	fmt.Fprintf(&b, "  %-13s %s %s ", r.Why, r.Method, r.Pattern)
	for i, e := range r.Examples {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, " %s (w %d)", e.URI, e.Weight)
	}
	return b.String()
}

func millis(s float64) string {
	ms := s * 1000
	if ms < 10 {
		return fmt.Sprintf("%.1f ms", ms)
	}
	return fmt.Sprintf("%.0f ms", ms)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
