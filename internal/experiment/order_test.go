package experiment

import "testing"

func TestWilliamsIsBalanced(t *testing.T) {
	for k := 1; k <= 7; k++ {
		rows := Williams(k)
		pos := make([][]int, k) // arm -> position counts
		for i := range pos {
			pos[i] = make([]int, k)
		}
		follows := map[[2]int]int{}
		for _, row := range rows {
			seen := map[int]bool{}
			for i, a := range row {
				if seen[a] {
					t.Fatalf("k=%d: row %v repeats arm %d", k, row, a)
				}
				seen[a] = true
				pos[a][i]++
				if i > 0 {
					follows[[2]int{row[i-1], a}]++
				}
			}
		}
		for a := range pos {
			for i := range pos[a] {
				if pos[a][i] != pos[0][0] {
					t.Errorf("k=%d: arm %d runs %d times in position %d, arm 0 %d times in position 0", k, a, pos[a][i], i, pos[0][0])
				}
			}
		}
		want := -1
		for a := 0; a < k; a++ {
			for b := 0; b < k; b++ {
				if a == b {
					continue
				}
				n := follows[[2]int{a, b}]
				if want < 0 {
					want = n
				}
				if n != want {
					t.Errorf("k=%d: %d follows %d %d times, want %d as every other pair", k, b, a, n, want)
				}
			}
		}
	}
}
