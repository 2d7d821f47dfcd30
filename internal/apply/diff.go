package apply

import (
	"strings"

	"github.com/pmezard/go-difflib/difflib"
)

// unified is the unified diff of after against before, with the server's paths as git writes them (a/PATH,
// b/PATH; /dev/null for a new file), so that `patch -d / -p1` applies it; "" when nothing changed.
func unified(before, after, from, dest string) string {
	a, b := "a"+from, "b"+dest
	if from == "" {
		a = "/dev/null"
	}
	d, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{A: lines(before), B: lines(after), FromFile: a, ToFile: b, Context: 3})
	if err != nil {
		return "" // writing to memory does not fail
	}
	return d
}

// lines splits text into lines that keep their newline, as the diff wants them.
func lines(text string) []string {
	if text == "" {
		return nil
	}
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	out := strings.SplitAfter(text, "\n")
	return out[:len(out)-1]
}
