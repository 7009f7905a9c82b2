package toolsearch

import (
	"cmp"
	"slices"
	"strings"
	"unicode"

	"github.com/kljensen/snowball/english"

	"github.com/mcpgram/mcpgram"
)

// Words splits text into lower-case words: at every character that is
// not a letter or a digit, and inside a word where its case changes
// (getFileInfo: get, file, info; APIKey: api, key).
func Words(text string) []string {
	var out []string
	var word []rune
	flush := func() {
		if len(word) > 0 {
			out = append(out, strings.ToLower(string(word)))
			word = word[:0]
		}
	}
	runes := []rune(text)
	for i, r := range runes {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush()
			continue
		}
		if i > 0 && len(word) > 0 && unicode.IsUpper(r) {
			prev := runes[i-1]
			nextLower := i+1 < len(runes) && unicode.IsLower(runes[i+1])
			// fileInfo → file|Info; APIKey → API|Key, at the last capital
			// before a lower-case letter.
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || unicode.IsUpper(prev) && nextLower {
				flush()
			}
		}
		word = append(word, r)
	}
	flush()
	return out
}

// Stems returns the stems of text's words, common English words left
// out, in order (a stem may repeat).
func Stems(text string) []string {
	words := Words(text)
	out := words[:0]
	for _, w := range words {
		if s := stemOf(w); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// stemOf is the stem of a lower-case word, "" for a common English word.
func stemOf(word string) string {
	if english.IsStopWord(word) {
		return ""
	}
	return english.Stem(word, false)
}

// actionWords are the verbs tool names start with; they say what tools do
// to things, not which things, so Topics leaves them out.
var actionWords = map[string]bool{
	"get": true, "list": true, "create": true, "update": true, "delete": true, "search": true,
	"find": true, "set": true, "add": true, "remove": true, "read": true, "write": true,
	"edit": true, "run": true, "new": true, "post": true, "patch": true, "put": true,
	"retrieve": true, "fetch": true, "query": true, "api": true, "by": true,
}

// Topics returns up to n words that name what the tools are about: the
// words of their names found in the most tools, verbs and common words
// left out, in that order (ties by the word), each in the form written
// most often. A server that says nothing of itself is summed up by them.
func Topics(tools []mcpgram.Tool, n int) []string {
	inTools := map[string]int{}          // stem: how many tools
	forms := map[string]map[string]int{} // stem: written form: count
	for _, t := range tools {
		seen := map[string]bool{}
		for _, w := range Words(t.Name) {
			if english.IsStopWord(w) || actionWords[w] || len(w) < 3 {
				continue
			}
			stem := english.Stem(w, false)
			if forms[stem] == nil {
				forms[stem] = map[string]int{}
			}
			forms[stem][w]++
			if !seen[stem] {
				seen[stem] = true
				inTools[stem]++
			}
		}
	}
	stems := make([]string, 0, len(inTools))
	for s := range inTools {
		stems = append(stems, s)
	}
	slices.SortFunc(stems, func(a, b string) int { return cmp.Or(cmp.Compare(inTools[b], inTools[a]), strings.Compare(a, b)) })
	var out []string
	for _, s := range stems[:min(n, len(stems))] {
		best, count := "", 0
		for f, c := range forms[s] {
			if c > count || c == count && f < best {
				best, count = f, c
			}
		}
		out = append(out, best)
	}
	return out
}
