// The tolerant JSON pass: the slips models make in a call's arguments,
// fixed only where what was meant is plain. It runs only on arguments that
// encoding/json refused, and what it returns is checked by encoding/json
// again, so valid JSON is never touched and nothing invalid gets through.

package toolcall

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// The kinds of repair DecodeArguments makes, as the executor records them
// on a call.
const (
	RepairTrailingComma = "json_trailing_comma" // a comma before } or ]
	RepairQuotes        = "json_quotes"         // 'single' or “typographic” quotes as JSON quotes
	RepairComments      = "json_comments"       // // and /* */ comments
	RepairUnclosed      = "json_unclosed"       // closing braces or brackets missing at the very end
	RepairArgsXML       = "args_xml"            // <key>value</key> elements instead of a JSON object
	RepairArgsLines     = "args_lines"          // key: value lines instead of a JSON object
)

// Typographic quotes, as a model trained on prose writes them, paired
// as languages and keyboards pair them: “…”, ”…”, “…“ and „…“.
// Each opens a string; any of its kind but the low one (which only
// opens) ends it.
const (
	typoDoubles = "“”„‟"
	typoSingles = "‘’‚‛"
	lowDouble   = '„'
	lowSingle   = '‚'
)

// A jsonFrame is an object or array left open while the pass reads on.
type jsonFrame struct {
	kind   byte // '{' or '['
	commas int  // commas written at this level: members beyond the first
}

// A jsonRepair is the state of one tolerant pass over raw.
type jsonRepair struct {
	raw   string
	out   strings.Builder
	stack []jsonFrame
	kinds [4]bool // trailing comma, quotes, comments, unclosed
	// A comma is held back until the next token shows whether it is a
	// trailing one; space and comments after it are held with it.
	comma bool
	space strings.Builder
	last  byte // the last byte written outside strings, '"' for a string
}

// repairJSON fixes the JSON slips in raw: trailing commas, single and
// typographic quotes used as JSON quotes, comments, and, when closeAtEnd,
// closing braces and brackets missing at the very end. It returns the
// repaired text and the kinds of repair made; ok is true only when a
// repair was made and the result is valid JSON. One pass, linear in
// len(raw); it gives up on anything else, such as a string left open.
func repairJSON(raw string, closeAtEnd bool) (fixed string, kinds []string, ok bool) {
	r := &jsonRepair{raw: raw}
	r.out.Grow(len(raw) + 8)
	if !r.scan() {
		return "", nil, false
	}
	if r.comma {
		r.out.WriteByte(',')
		r.out.WriteString(r.space.String())
	}
	if len(r.stack) > 0 {
		if !closeAtEnd || r.comma || !r.closable() {
			return "", nil, false
		}
		for i := len(r.stack) - 1; i >= 0; i-- {
			r.out.WriteByte(closer(r.stack[i].kind))
		}
		r.kinds[3] = true
	}
	for i, name := range []string{RepairTrailingComma, RepairQuotes, RepairComments, RepairUnclosed} {
		if r.kinds[i] {
			kinds = append(kinds, name)
		}
	}
	fixed = r.out.String()
	if len(kinds) == 0 || !json.Valid([]byte(fixed)) {
		return "", nil, false
	}
	return fixed, kinds, true
}

// scan reads raw once, writing the repaired text; false means give up.
func (r *jsonRepair) scan() bool {
	raw := r.raw
	for i := 0; i < len(raw); {
		c := raw[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			r.blank(raw[i : i+1])
			i++
		case c == '/' && i+1 < len(raw) && raw[i+1] == '/':
			r.kinds[2] = true
			end := strings.IndexByte(raw[i:], '\n')
			if end < 0 {
				return true
			}
			i += end
		case c == '/' && i+1 < len(raw) && raw[i+1] == '*':
			r.kinds[2] = true
			end := strings.Index(raw[i+2:], "*/")
			if end < 0 {
				return false
			}
			r.blank(" ")
			i += 2 + end + 2
		case c == ',':
			if r.comma { // two commas in a row: not a slip we fix
				return false
			}
			r.comma = true
			i++
		default:
			n, ok := r.token(i)
			if !ok {
				return false
			}
			i = n
		}
	}
	return true
}

// blank writes space, or holds it with a held comma.
func (r *jsonRepair) blank(s string) {
	if r.comma {
		r.space.WriteString(s)
		return
	}
	r.out.WriteString(s)
}

// token writes the token at raw[i:] after settling a held comma, and
// returns where it ends.
func (r *jsonRepair) token(i int) (int, bool) {
	c := r.raw[i]
	if r.comma {
		r.comma = false
		if c == '}' || c == ']' {
			r.kinds[0] = true
		} else {
			r.out.WriteByte(',')
			if n := len(r.stack); n > 0 {
				r.stack[n-1].commas++
			}
		}
		r.out.WriteString(r.space.String())
		r.space.Reset()
	}
	switch c {
	case '{', '[':
		if len(r.stack) >= MaxArgumentDepth {
			return 0, false
		}
		r.stack = append(r.stack, jsonFrame{kind: c})
	case '}', ']':
		if n := len(r.stack); n > 0 && closer(r.stack[n-1].kind) == c {
			r.stack = r.stack[:n-1]
		}
	case '"', '\'':
		return r.str(i)
	}
	if c >= utf8.RuneSelf {
		if q, _ := utf8.DecodeRuneInString(r.raw[i:]); strings.ContainsRune(typoDoubles+typoSingles, q) {
			return r.str(i)
		}
	}
	r.out.WriteByte(c)
	r.last = c
	return i + 1, true
}

// str copies the string opened at raw[i] as a JSON string. A string in
// double quotes is copied as it is; one in single or typographic quotes
// is written in double quotes, with the double quotes inside escaped.
func (r *jsonRepair) str(i int) (int, bool) {
	open, size := utf8.DecodeRuneInString(r.raw[i:])
	if open != '"' {
		r.kinds[1] = true
	}
	r.out.WriteByte('"')
	for j := i + size; j < len(r.raw); {
		c, n := utf8.DecodeRuneInString(r.raw[j:])
		switch {
		case c == '\\' && j+1 < len(r.raw):
			if open == '\'' && r.raw[j+1] == '\'' {
				r.out.WriteByte('\'') // \' is no JSON escape
			} else {
				r.out.WriteString(r.raw[j : j+2])
			}
			j += 2
			continue
		case ends(open, c):
			r.out.WriteByte('"')
			r.last = '"'
			return j + n, true
		case c == '"':
			r.out.WriteString(`\"`)
		default:
			r.out.WriteString(r.raw[j : j+n])
		}
		j += n
	}
	return 0, false // a string left open: what it holds is unknown
}

// closable reports whether closing what is open at the end says what the
// model meant: the text ends after a whole value, and no closer could have
// gone earlier. A closer could, in an object inside an object (or an array
// inside an array) that already has several members: they might have
// belonged to the outer one.
func (r *jsonRepair) closable() bool {
	switch c := r.last; {
	case c == '"' || c == '}' || c == ']', c >= '0' && c <= '9', c >= 'a' && c <= 'z':
	default:
		return false
	}
	for i := 1; i < len(r.stack); i++ {
		if r.stack[i].commas > 0 && r.stack[i].kind == r.stack[i-1].kind {
			return false
		}
	}
	return true
}

// ends reports whether c ends a string opened by open.
func ends(open, c rune) bool {
	switch {
	case strings.ContainsRune(typoDoubles, open):
		return c != lowDouble && strings.ContainsRune(typoDoubles, c)
	case strings.ContainsRune(typoSingles, open):
		return c != lowSingle && strings.ContainsRune(typoSingles, c)
	}
	return c == open
}

func closer(open byte) byte {
	if open == '{' {
		return '}'
	}
	return ']'
}
