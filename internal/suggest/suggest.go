package suggest

import "strings"

// maxDistance is the most edits a typo is taken to be.
const maxDistance = 2

// Closest returns the first name of set within two edits of s (compared in
// lower case), the nearest one when several are; ok is false when none is.
func Closest(s string, set []string) (name string, ok bool) {
	best, bestD := "", maxDistance+1
	for _, k := range set {
		if d := editDistance(strings.ToLower(s), k); d < bestD {
			best, bestD = k, d
		}
	}
	return best, best != ""
}

// editDistance is the Levenshtein distance between a and b, in bytes; it gives
// up early (returning a large value) on long inputs, which are no typo.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 1 << 30
	}
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
