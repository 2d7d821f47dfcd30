package compare

import (
	"slices"
	"testing"
)

// TestSplitWords: an arm's words as a POSIX shell splits them.
func TestSplitWords(t *testing.T) {
	for in, want := range map[string][]string{
		`http://a/ -c 4`:              {"http://a/", "-c", "4"},
		`-H 'A: b c'  x`:              {"-H", "A: b c", "x"},
		`-H "A: \"q\" \\" y`:          {"-H", `A: "q" \`, "y"},
		`a\ b c`:                      {"a b", "c"},
		`''`:                          {""},
		"\t spaced \n":                {"spaced"},
		`unix:/s.sock:/srv/index.php`: {"unix:/s.sock:/srv/index.php"},
	} {
		if got, err := SplitWords(in); err != nil || !slices.Equal(got, want) {
			t.Errorf("%q: %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{`'open`, `"open`} {
		if _, err := SplitWords(bad); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
	if got := ArmNames(28); got[0] != "A" || got[25] != "Z" || got[26] != "arm27" || got[27] != "arm28" {
		t.Errorf("arm names %q", got)
	}
}
