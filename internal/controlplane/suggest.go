package controlplane

import (
	"fmt"
	"strings"
)

// Closest returns the candidate nearest to name, ignoring case, at an edit distance of at
// most within ("" when none is that near; of equally near ones, the first): the "did you
// mean" of a misspelled name.
func Closest(name string, candidates []string, within int) string {
	best, bestDist := "", within+1
	for _, c := range candidates {
		if d := levenshtein(strings.ToLower(name), strings.ToLower(c)); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// DidYouMean is " (did you mean X?)" for the name of known nearest to a misspelled name, or
// "" when none is near (within a third of its length, plus one).
func DidYouMean(name string, known []string) string {
	if best := Closest(name, known, len(name)/3+1); best != "" {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	return ""
}

// levenshtein is the Levenshtein distance of two strings: the fewest single-byte
// insertions, deletions and substitutions that turn a into b.
func levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
