package calc

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// scan checks the text before expr-lang's parser reads it, because that
// parser accepts more than arithmetic: it skips // and /* */ comments (so
// "7 // 2 + 100" would be 7), and reports an oversized number with
// strconv's words. scan refuses comments, characters outside ASCII (such
// as other scripts' digits, which would pass for names) and numbers too
// large to read; the parser and the evaluator's whitelist
// explain the rest.
func scan(s string) error {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		pos := utf8.RuneCountInString(s[:i]) + 1
		switch {
		case strings.HasPrefix(s[i:], "//"):
			return errorf("\"//\" at position %d is not an operator here: for whole-number division write floor(a / b)", pos)
		case strings.HasPrefix(s[i:], "/*"):
			return errorf("\"/*\" at position %d would start a comment; comments are not allowed", pos)
		case isDigit(r) || (r == '.' && i+1 < len(s) && isDigit(rune(s[i+1]))):
			n := numberLen(s[i:])
			if err := checkNumber(s[i : i+n]); err != nil {
				return errorf("at position %d, %v", pos, err)
			}
			i += n
			continue
		case r == utf8.RuneError && size == 1:
			return errorf("the expression is not valid UTF-8 at position %d", pos)
		case r >= utf8.RuneSelf:
			return errorf("%q at position %d is not allowed: %s", r, pos, allowed())
		}
		i += size
	}
	return nil
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' }

// numberLen is the length of the number literal at the start of s: digits,
// letters (hex digits, exponents, prefixes), dots, the underscores that
// expr-lang allows between digits, and an exponent's sign.
func numberLen(s string) int {
	n := 0
	for n < len(s) {
		c := s[n]
		switch {
		case isDigit(rune(c)), c == '.', c == '_', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case (c == '+' || c == '-') && n > 0 && (s[n-1] == 'e' || s[n-1] == 'E') && !isPrefixed(s):
		default:
			return n
		}
		n++
	}
	return n
}

func isPrefixed(s string) bool {
	return len(s) > 1 && s[0] == '0' && strings.ContainsRune("xXbBoO", rune(s[1]))
}

// checkNumber refuses a number too large to read: a whole number beyond
// int64, or any beyond float64; a malformed one is left for the parser to explain.
func checkNumber(lit string) error {
	lit = strings.ReplaceAll(lit, "_", "")
	tooLarge := errors.New("the number " + lit + " is too large")
	if isPrefixed(lit) || !strings.ContainsAny(lit, ".eE") {
		v, err := strconv.ParseUint(lit, 0, 64)
		var ne *strconv.NumError
		// expr-lang reads whole numbers as int64.
		if errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange) || err == nil && v > math.MaxInt64 {
			return errors.New("the number " + lit + " is too large for a whole number; write it in e-notation, such as 1.5e20")
		}
		return nil
	}
	if _, err := strconv.ParseFloat(lit, 64); errors.Is(err, strconv.ErrRange) {
		return tooLarge
	}
	return nil
}
