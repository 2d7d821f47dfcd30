package textline

import (
	"testing"
	"unicode/utf8"
)

func TestFitCutsAtAWordWithAnEllipsis(t *testing.T) {
	for _, c := range []struct {
		in    string
		width int
		want  string
	}{
		{"short line", 20, "short line"},
		{"exactly ten", 11, "exactly ten"},
		{"best so far: jit tracing, opcache on", 22, "best so far: jit…"},
		{"best so far: jit, tracing", 18, "best so far: jit…"},
		{"one word: abcdefghij", 8, "one…"},
		{"abcdefghijklmnop", 8, "abcdefg…"},
		{"word end here", 9, "word end…"},
	} {
		got := Fit(c.in, c.width)
		if got != c.want {
			t.Errorf("Fit(%q, %d) = %q, want %q", c.in, c.width, got, c.want)
		}
		if n := utf8.RuneCountInString(got); n > c.width {
			t.Errorf("Fit(%q, %d) is %d columns", c.in, c.width, n)
		}
	}
}
