package report

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/phptune/phptune/internal/textline"
)

// termWidth is the widest line the terminal summaries print: the program's line width.
const termWidth = textline.Width

// textTable is a table for a terminal: columns padded to their widest cell, each row's details wrapped under
// it, no line wider than the width it is written at.
type textTable struct {
	Head  []string
	Right []bool // right-aligned columns
	// Max is each column's widest (0: no limit); a longer cell is cut with "…" and given whole in its row's
	// details.
	Max  []int
	Rows []textRow
}

type textRow struct {
	Cells   []string
	Details []string
}

// write prints the table indented by indent spaces, details indented four more, within width columns.
func (t textTable) write(w io.Writer, indent, width int) {
	cols := len(t.Head)
	widths := make([]int, cols)
	rows := make([]textRow, len(t.Rows))
	for i, r := range t.Rows {
		rows[i] = textRow{Cells: make([]string, cols), Details: append([]string(nil), r.Details...)}
		for c := 0; c < cols && c < len(r.Cells); c++ {
			cell := r.Cells[c]
			if c < len(t.Max) && t.Max[c] > 0 && textLen(cell) > t.Max[c] {
				rows[i].Details = append([]string{t.Head[c] + ": " + cell}, rows[i].Details...)
				cell = short(cell, t.Max[c])
			}
			rows[i].Cells[c] = cell
		}
	}
	for c, h := range t.Head {
		widths[c] = textLen(h)
		for _, r := range rows {
			widths[c] = max(widths[c], textLen(r.Cells[c]))
		}
	}
	pad := strings.Repeat(" ", indent)
	line := func(cells []string) {
		var b strings.Builder
		b.WriteString(pad)
		for c, cell := range cells {
			if c > 0 {
				b.WriteString("  ")
			}
			gap := strings.Repeat(" ", widths[c]-textLen(cell))
			if c < len(t.Right) && t.Right[c] {
				b.WriteString(gap + cell)
			} else if c < cols-1 {
				b.WriteString(cell + gap)
			} else {
				b.WriteString(cell)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
	line(t.Head)
	for _, r := range rows {
		line(r.Cells)
		for _, d := range r.Details {
			writeWrapped(w, pad+"    ", pad+"      ", d, width)
		}
	}
}

// Line writes text for a terminal within its width: the first line after first, the others after rest.
func Line(w io.Writer, first, rest, text string) { writeWrapped(w, first, rest, text, termWidth) }

// writeWrapped prints text within width columns: the first line after first, the others after rest.
func writeWrapped(w io.Writer, first, rest, text string, width int) {
	for i, l := range wrap(text, width-textLen(first), width-textLen(rest)) {
		lead := first
		if i > 0 {
			lead = rest
		}
		fmt.Fprintln(w, lead+l)
	}
}

// wrap breaks text at spaces into lines of at most firstWidth columns, then restWidth; a word longer than a
// line is broken inside.
func wrap(text string, firstWidth, restWidth int) []string {
	var lines []string
	cur, limit := "", max(firstWidth, 20)
	flush := func() {
		lines = append(lines, cur)
		cur, limit = "", max(restWidth, 20)
	}
	for _, word := range strings.Fields(text) {
		for textLen(word) > limit {
			if cur != "" {
				flush()
				continue
			}
			r := []rune(word)
			lines = append(lines, string(r[:limit]))
			word, limit = string(r[limit:]), max(restWidth, 20)
		}
		switch {
		case cur == "":
			cur = word
		case textLen(cur)+1+textLen(word) <= limit:
			cur += " " + word
		default:
			flush()
			cur = word
		}
	}
	if cur != "" || len(lines) == 0 {
		lines = append(lines, cur)
	}
	return lines
}

// textLen is the columns a string takes (one a rune: the summaries print no wide characters).
func textLen(s string) int { return utf8.RuneCountInString(s) }
