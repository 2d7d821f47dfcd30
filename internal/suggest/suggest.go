// Package suggest finds the names nearest to a mistyped one, for errors that say what was probably meant
// ("--knob opcach": did you mean opcache?).
package suggest

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Nearest returns at most three of known, nearest to name first: those within a few edits of it (a letter
// missing, added, changed or two swapped; case ignored), or that it is a prefix of (a name typed part way).
func Nearest(name string, known []string) []string {
	type cand struct {
		name string
		d    int
	}
	low := strings.ToLower(name)
	limit := max(1, min(3, len([]rune(low))/3))
	var cs []cand
	seen := map[string]bool{}
	for _, k := range known {
		if seen[k] || k == name {
			continue
		}
		seen[k] = true
		kl := strings.ToLower(k)
		d := distance(low, kl)
		if d > limit && !(len(low) >= 3 && strings.HasPrefix(kl, low)) {
			continue
		}
		cs = append(cs, cand{k, d})
	}
	sort.SliceStable(cs, func(i, j int) bool {
		if cs[i].d != cs[j].d {
			return cs[i].d < cs[j].d
		}
		return cs[i].name < cs[j].name
	})
	var out []string
	for i := 0; i < len(cs) && i < 3; i++ {
		out = append(out, cs[i].name)
	}
	return out
}

// Phrase is Nearest as the end of an error message: " (did you mean X or Y?)", or "" when nothing is near.
func Phrase(name string, known []string) string {
	n := Nearest(name, known)
	if len(n) == 0 {
		return ""
	}
	return " (did you mean " + Or(n) + "?)"
}

// NearbyFile is Phrase for a file that is not there: the files of its directory whose names are near its name,
// as paths ("" when none is, or the directory cannot be read).
func NearbyFile(path string) string {
	dir := filepath.Dir(path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	near := Nearest(filepath.Base(path), names)
	if len(near) == 0 {
		return ""
	}
	for i, n := range near {
		near[i] = filepath.Join(dir, n)
	}
	return " (did you mean " + Or(near) + "?)"
}

// Or joins names as a person would: "a", "a or b", "a, b or c".
func Or(names []string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// distance is the optimal string alignment distance: insertions, deletions, substitutions and swaps of two
// neighbouring letters, each one edit.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
