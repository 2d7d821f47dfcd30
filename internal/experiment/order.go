package experiment

// Williams is a Williams design for k arms: orders in which every arm runs in every position equally often and
// follows every other arm equally often, so that neither a drift of the machine nor what the previous trial
// left behind (a warm cache, a busy core) falls on one arm more than another. Two arms give A B, B A; an odd
// number of arms needs each row mirrored, 2k rows in all.
func Williams(k int) [][]int {
	if k <= 1 {
		return [][]int{make([]int, k)}
	}
	// The first row: 0, 1, k-1, 2, k-2, ...; each next row adds 1 mod k.
	first := make([]int, k)
	lo, hi := 1, k-1
	for i := 1; i < k; i++ {
		if i%2 == 1 {
			first[i] = lo
			lo++
		} else {
			first[i] = hi
			hi--
		}
	}
	var rows [][]int
	for r := 0; r < k; r++ {
		row := make([]int, k)
		for i, v := range first {
			row[i] = (v + r) % k
		}
		rows = append(rows, row)
	}
	if k%2 == 1 {
		for r := 0; r < k; r++ {
			row := make([]int, k)
			for i := range row {
				row[i] = rows[r][k-1-i]
			}
			rows = append(rows, row)
		}
	}
	return rows
}
