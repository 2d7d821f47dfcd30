package textline

import "strings"

// Width is the columns a line of the program's output keeps within: a terminal of 120 columns shows it whole.
const Width = 120

// Fit is s cut to at most width columns (runes) at a word's end, with an ellipsis: a status line redrawn in place
// must not wrap, for a wrapped line is not redrawn but repeated. A line of one long word is cut inside it.
func Fit(s string, width int) string {
	r := []rune(s)
	if len(r) <= width {
		return s
	}
	if width < 1 {
		return ""
	}
	cut := string(r[:width-1]) // room for the ellipsis
	if i := strings.LastIndexByte(cut, ' '); i > 0 && r[width-1] != ' ' {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ,;:") + "…"
}
