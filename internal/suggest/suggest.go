// Package suggest finds the name someone probably meant, for the "did you
// mean" of an error: a server or tool the model mistyped, a key of
// mcpgram.yaml an operator misspelt.
package suggest

import "strings"

// Closest returns the candidate nearest to name by edit distance, ignoring
// case, when it is near enough to be a typo of it: at most a third of
// name's length apart, and never less than 2.
func Closest(name string, candidates []string) (string, bool) {
	best, bestD := "", -1
	for _, c := range candidates {
		d := Distance(strings.ToLower(name), strings.ToLower(c))
		if bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	limit := max(2, len([]rune(name))/3)
	if bestD < 0 || bestD > limit {
		return "", false
	}
	return best, true
}

// Distance is the Levenshtein distance between a and b, in runes.
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
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
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// ClosestPath returns the path (words separated by spaces, such as a
// command's "mcp list") whose last word is nearest to name, as Closest
// judges it: what someone meant who typed a word of another level. Of
// paths that end in the same word, the first is taken.
func ClosestPath(name string, paths []string) (string, bool) {
	byLast := map[string]string{}
	var lasts []string
	for _, p := range paths {
		last := p[strings.LastIndexByte(p, ' ')+1:]
		if _, dup := byLast[last]; !dup {
			byLast[last] = p
			lasts = append(lasts, last)
		}
	}
	best, ok := Closest(name, lasts)
	return byLast[best], ok
}
