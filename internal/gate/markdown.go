package gate

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/phptune/phptune/internal/atomicfile"
)

// SaveMarkdown writes the Markdown (WriteMarkdown) to path (--markdown): whole, or appended when path is GitHub's
// job summary ($GITHUB_STEP_SUMMARY), which other steps' output shares.
func (r *Result) SaveMarkdown(path string) error { return writeOrAppend(path, r.WriteMarkdown) }

// writeOrAppend writes a file whole, or appends to GitHub's job summary.
func writeOrAppend(path string, write func(io.Writer) error) error {
	var b bytes.Buffer
	if err := write(&b); err != nil {
		return err
	}
	if sum := os.Getenv("GITHUB_STEP_SUMMARY"); sum == "" || filepath.Clean(sum) != filepath.Clean(path) {
		return atomicfile.Save(path, b.Bytes())
	}
	fh, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("--markdown: %w", err)
	}
	_, err = fh.Write(b.Bytes())
	return errors.Join(err, fh.Close())
}

// WriteMarkdown writes the summary as GitHub-flavoured Markdown, for a CI job's summary ($GITHUB_STEP_SUMMARY) or
// a merge request's comment: the answer, a table of every comparison, and how sure it is.
func (r *Result) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "### phptune gate: %s\n\n", mdText(r.Headline()))
	b.WriteString("| | CPU µs/request, OLD | NEW | change | interval | verdict | rounds |\n")
	b.WriteString("|---|--:|--:|--:|---|---|--:|\n")
	for _, c := range r.Comparisons {
		name, change, says := "`"+mdCode(c.Name)+"`", pct(c.Change), c.Says(r.MinEffect)
		if c.cpuGate() == Worse {
			name, change, says = "**"+name+"**", "**"+change+"**", "**"+says+"**"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %d |\n", name, micros(c.OldUs), micros(c.NewUs), change,
			c.Interval(), says, c.Rounds)
	}
	if r.hasLatency() {
		r.latencyMarkdown(&b)
	}
	fmt.Fprintf(&b, "\n%s\n", mdText(r.method()))
	_, err := io.WriteString(w, b.String())
	return err
}

// mdCode is s inside a code span of a table cell: no backtick to end it, the cell's bar escaped.
func mdCode(s string) string {
	return strings.NewReplacer("`", "'", "|", `\|`).Replace(s)
}

// mdText is s as plain text of a Markdown line: what would format it is escaped.
func mdText(s string) string {
	return strings.NewReplacer(`\`, `\\`, "*", `\*`, "_", `\_`, "`", "\\`", "|", `\|`, "<", "&lt;", "[", `\[`).Replace(s)
}

// latencyMarkdown writes the latency figure's table.
func (r *Result) latencyMarkdown(b *strings.Builder) {
	b.WriteString("\n| p99 at a fixed rate | req/s | p50 ms, OLD | NEW | p99 ms, OLD | NEW | change | interval | verdict |\n")
	b.WriteString("|---|--:|--:|--:|--:|--:|--:|---|---|\n")
	for _, c := range r.Comparisons {
		l := c.Latency
		if l == nil {
			continue
		}
		name, change, says := "`"+mdCode(c.Name)+"`", pct(l.Change), l.Says()
		if l.Gate == Worse {
			name, change, says = "**"+name+"**", "**"+change+"**", "**"+says+"**"
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", name, perSecond(l.RatePerS), millis(l.OldP50Ms),
			millis(l.NewP50Ms), millis(l.OldP99Ms), millis(l.NewP99Ms), change, l.interval(c.Rounds), says)
	}
}
