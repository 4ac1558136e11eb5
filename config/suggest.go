package config

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Nearest is the known word closest to word, for a "did you mean" hint, or
// "" when none is close enough to be what was meant: at most a third of
// word's letters edited (at least one), case and a swap of two neighbours
// counting as one edit. Ties go to the earliest in known.
func Nearest(word string, known []string) string {
	limit := max(1, utf8.RuneCountInString(word)/3)
	best, bestDist := "", limit+1
	for _, k := range known {
		if d := editDistance(strings.ToLower(word), strings.ToLower(k)); d < bestDist && k != word {
			best, bestDist = k, d
		}
	}
	return best
}

// didYouMean is the hint that ends an "unknown" error: ` (did you mean
// "workers"?)`, or "".
func didYouMean(word string, known []string) string {
	if s := Nearest(word, known); s != "" {
		return fmt.Sprintf(" (did you mean %q?)", s)
	}
	return ""
}

// editDistance is the optimal string alignment distance: insertions,
// deletions, substitutions and transpositions of neighbours.
func editDistance(a, b string) int {
	s, t := []rune(a), []rune(b)
	rows := make([][]int, len(s)+1)
	for i := range rows {
		rows[i] = make([]int, len(t)+1)
		rows[i][0] = i
	}
	for j := range rows[0] {
		rows[0][j] = j
	}
	for i := 1; i <= len(s); i++ {
		for j := 1; j <= len(t); j++ {
			cost := 1
			if s[i-1] == t[j-1] {
				cost = 0
			}
			rows[i][j] = min(rows[i-1][j]+1, rows[i][j-1]+1, rows[i-1][j-1]+cost)
			if i > 1 && j > 1 && s[i-1] == t[j-2] && s[i-2] == t[j-1] {
				rows[i][j] = min(rows[i][j], rows[i-2][j-2]+1)
			}
		}
	}
	return rows[len(s)][len(t)]
}
