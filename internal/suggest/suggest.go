// Package suggest finds the names a mistyped one was probably meant to be,
// by the rule cobra applies to command names: an edit distance of at most
// two, or a prefix, ignoring case.
package suggest

import "strings"

// MaxDistance is the largest edit distance still suggested (cobra's
// SuggestionsMinimumDistance).
const MaxDistance = 2

// For returns the names of candidates typed is close to, in the order
// given: those within MaxDistance edits of it, or that start with it.
// A name equal to typed is not a suggestion.
func For(typed string, candidates []string) []string {
	t := strings.ToLower(typed)
	if t == "" {
		return nil
	}
	var out []string
	for _, c := range candidates {
		lc := strings.ToLower(c)
		if lc == t {
			continue
		}
		if distance(t, lc) <= MaxDistance || strings.HasPrefix(lc, t) {
			out = append(out, c)
		}
	}
	return out
}

// Phrase is "did you mean X?" for one suggestion, "did you mean X or Y?"
// for several, and "" for none; each name is quoted by quote.
func Phrase(names []string, quote func(string) string) string {
	if len(names) == 0 {
		return ""
	}
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = quote(n)
	}
	if len(q) == 1 {
		return "did you mean " + q[0] + "?"
	}
	return "did you mean " + strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1] + "?"
}

// distance is the Levenshtein distance of a and b, in runes.
func distance(a, b string) int {
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
