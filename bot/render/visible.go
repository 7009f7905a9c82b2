package render

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Visible makes every invisible or direction-changing character of s
// visible, written as its code point the way JSON writes one ("\u202E";
// one beyond the BMP as its UTF-16 pair), so that "invoice\u202Efdp.exe"
// does not read as "invoiceexe.pdf". It is for values a user must judge:
// the arguments on an approval card, file names, the names and
// descriptions of servers and tools. Inside a JSON string the result is
// the same value, still valid JSON. Line feeds and tabs stay (they show as
// what they are); a byte that is not UTF-8 is written "\xFF". An emoji
// keeps its variation selector and the joiners between its parts.
func Visible(s string) string {
	var b strings.Builder
	changed := false
	prev := rune(-1) // the previous rune kept as it is, or -1
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		invalid := r == utf8.RuneError && size <= 1
		next, n := utf8.DecodeRuneInString(s[i+size:])
		if next == utf8.RuneError && n <= 1 {
			next = -1
		}
		keep := !invalid && (!hidden(r) || emojiPart(prev, r, next))
		if !keep && !changed {
			changed = true
			b.Grow(len(s) + 16)
			b.WriteString(s[:i])
		}
		switch {
		case keep:
			if changed {
				b.WriteString(s[i : i+size])
			}
			prev = r
		case invalid:
			fmt.Fprintf(&b, `\x%02X`, s[i])
			prev = -1
		default:
			writeCode(&b, r)
			prev = -1
		}
		i += size
	}
	if !changed {
		return s
	}
	return b.String()
}

// blank are characters that draw nothing but are letters or symbols, so
// no category below catches them.
var blank = []rune{'\u2800'} // Braille pattern blank

// hidden reports whether r draws nothing, or changes the direction or
// shape of the text around it: control characters (but line feed and
// tab), format characters (the bidirectional controls, zero-width spaces
// and joiners, the soft hyphen, tag characters), line and paragraph
// separators, variation selectors, and what Unicode calls default
// ignorable (Hangul fillers, for one).
func hidden(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || r == 0x7F:
		return true
	case r < 0x80:
		return false
	}
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp,
		unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point) ||
		strings.ContainsRune(string(blank), r)
}

// emojiPart reports whether r, hidden on its own, is part of an emoji: a
// text or emoji presentation selector right after a symbol, digit or
// keycap base, or a zero-width joiner between two pictographs.
func emojiPart(prev, r, next rune) bool {
	switch r {
	case '\uFE0E', '\uFE0F':
		return prev >= 0 && (unicode.In(prev, unicode.So, unicode.Sk, unicode.Sm) || unicode.IsDigit(prev) || prev == '#' || prev == '*')
	case '\u200D':
		pictograph := func(r rune) bool { return r >= 0 && !hidden(r) && unicode.In(r, unicode.So, unicode.Sk) }
		return (pictograph(prev) || prev == '\uFE0F') && pictograph(next)
	}
	return false
}

// writeCode writes r as JSON writes an escaped code point.
func writeCode(b *strings.Builder, r rune) {
	if r > 0xFFFF {
		r1, r2 := utf16.EncodeRune(r)
		fmt.Fprintf(b, `\u%04X\u%04X`, r1, r2)
		return
	}
	fmt.Fprintf(b, `\u%04X`, r)
}

// bidi reports whether r is a bidirectional control: an embedding,
// override or isolate (U+202A-U+202E, U+2066-U+2069) or a mark
// (U+200E, U+200F, U+061C), which can turn the text after it around or
// reorder the numbers beside it.
func bidi(r rune) bool {
	return r == '\u061C' || r == '\u200E' || r == '\u200F' || r >= '\u202A' && r <= '\u202E' || r >= '\u2066' && r <= '\u2069'
}

// showBidi writes each bidirectional control of s as its code point, as
// Visible does; the rest of s stays as it is. It is for the text a model
// writes, which may quote a name that turns around (invoice\u202Efdp.exe).
func showBidi(s string) string {
	// Every control is encoded from a 0xD8 (U+061C) or 0xE2 byte.
	if strings.IndexByte(s, 0xE2) < 0 && strings.IndexByte(s, 0xD8) < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if bidi(r) {
			writeCode(&b, r)
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// Shown is what a server wrote as the user may read it: every invisible
// or direction-changing character as its code point, and escaped.
func Shown(s string) string { return Escape(Visible(s)) }
