package cpuset

import (
	"fmt"
	"testing"
)

// TestSharesRotate: k arms on k shares; in any k rounds in a row every arm takes every share once, and in no
// round do two arms take the same one.
func TestSharesRotate(t *testing.T) {
	for _, k := range []int{1, 2, 3, 4} {
		for start := range 3 {
			seen := make([]map[int]bool, k)
			for slot := range k {
				seen[slot] = map[int]bool{}
			}
			for round := start; round < start+k; round++ {
				taken := map[int]bool{}
				for slot := range k {
					sh := Rotated(slot, round, k)
					if sh < 0 || sh >= k {
						t.Fatalf("k %d: slot %d round %d took share %d, out of range", k, slot, round, sh)
					}
					if taken[sh] {
						t.Errorf("k %d round %d: share %d taken by two arms", k, round, sh)
					}
					taken[sh], seen[slot][sh] = true, true
				}
			}
			for slot := range k {
				if len(seen[slot]) != k {
					t.Errorf("k %d, rounds %d to %d: slot %d ran on %d shares, want all %d", k, start, start+k-1, slot, len(seen[slot]), k)
				}
			}
		}
	}
	if a, b := Rotated(0, 1, 2), Rotated(0, 2, 2); a == b {
		t.Errorf("two arms: slot 0 took share %d in rounds 1 and 2, want them swapped", a)
	}
}

func TestShares(t *testing.T) {
	for _, c := range []struct {
		all  Set
		k    int
		want string
	}{
		{Set{0, 1}, 2, "[0 1]"},
		{Set{0, 1, 2, 3}, 2, "[0-1 2-3]"},
		{Set{0, 1, 2}, 2, "[0 1-2]"},
		{Set{0, 2, 4, 5, 6}, 3, "[0 2,4 5-6]"},
		{Set{0, 1}, 3, "[]"},
		{Set{0}, 1, "[0]"},
	} {
		if got := fmt.Sprint(Shares(c.all, c.k)); got != c.want {
			t.Errorf("Shares(%v, %d) = %s, want %s", c.all, c.k, got, c.want)
		}
	}
	if s := (Set{0, 1, 2, 5, 7, 8}).String(); s != "0-2,5,7-8" {
		t.Errorf("String = %q, want 0-2,5,7-8", s)
	}
}
