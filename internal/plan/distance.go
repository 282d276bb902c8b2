package plan

// Distance is the edit distance between a and b, in bytes: insertions,
// deletions, substitutions and swaps of two neighbours ("emial" is one edit
// from "email"), each counting 1 (the optimal string alignment distance).
// It is how ceiling tells a typo from another word wherever it says "did
// you mean": a plan's keys, template names and metrics (Nearest), and the
// command line's flags.
func Distance(a, b string) int {
	// rows[0] is the row before the previous one, rows[1] the previous,
	// rows[2] the current.
	var rows [3][]int
	for i := range rows {
		rows[i] = make([]int, len(b)+1)
	}
	for j := range rows[1] {
		rows[1][j] = j
	}
	for i := 1; i <= len(a); i++ {
		two, prev, cur := rows[0], rows[1], rows[2]
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], two[j-2]+1)
			}
		}
		rows[0], rows[1], rows[2] = prev, cur, two
	}
	return rows[1][len(b)]
}
