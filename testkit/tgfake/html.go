package tgfake

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
)

// allowedTags is Telegram's HTML subset for parse_mode=HTML.
var allowedTags = map[string]bool{
	"b": true, "strong": true, "i": true, "em": true, "u": true, "ins": true,
	"s": true, "strike": true, "del": true, "span": true, "tg-spoiler": true,
	"a": true, "code": true, "pre": true, "blockquote": true,
}

// ParseHTML checks s the way Telegram does for parse_mode=HTML and returns
// the visible text (tags removed, entities decoded). The error text follows
// Telegram's "can't parse entities: …".
func ParseHTML(s string) (string, error) {
	var out strings.Builder
	var stack []string
	fail := func(off int, format string, args ...any) (string, error) {
		return "", fmt.Errorf("can't parse entities: %s at byte offset %d", fmt.Sprintf(format, args...), off)
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch c {
		case '<':
			end := strings.IndexByte(s[i:], '>')
			if end < 0 {
				return fail(i, "can't find end of the tag")
			}
			tag := s[i+1 : i+end]
			closing := strings.HasPrefix(tag, "/")
			if closing {
				tag = tag[1:]
			}
			name, attrs, _ := strings.Cut(tag, " ")
			name = strings.ToLower(strings.TrimSpace(name))
			if name == "" || !allowedTags[name] {
				if closing {
					return fail(i, "unsupported end tag %q", name)
				}
				return fail(i, "unsupported start tag %q", name)
			}
			if closing {
				if len(stack) == 0 || stack[len(stack)-1] != name {
					return fail(i, "unmatched end tag %q", name)
				}
				stack = stack[:len(stack)-1]
			} else {
				if len(stack) > 0 {
					top := stack[len(stack)-1]
					if top == "code" || (top == "pre" && name != "code") {
						return fail(i, "entities inside %s are not allowed", top)
					}
				}
				if name == "blockquote" && slices.Contains(stack, "blockquote") {
					return fail(i, "blockquote entities can't be nested")
				}
				if err := checkAttrs(name, attrs); err != nil {
					return fail(i, "%v", err)
				}
				stack = append(stack, name)
			}
			i += end + 1
		case '&':
			end := strings.IndexByte(s[i:], ';')
			if end < 0 || end > 10 {
				return fail(i, "bare '&' is not allowed")
			}
			r, ok := decodeEntity(s[i+1 : i+end])
			if !ok {
				return fail(i, "unsupported HTML entity %q", s[i:i+end+1])
			}
			out.WriteRune(r)
			i += end + 1
		default:
			out.WriteByte(c)
			i++
		}
	}
	if len(stack) > 0 {
		return "", fmt.Errorf("can't parse entities: can't find end tag corresponding to start tag %q", stack[len(stack)-1])
	}
	return out.String(), nil
}

func checkAttrs(name, attrs string) error {
	attrs = strings.TrimSpace(attrs)
	switch name {
	case "a":
		if !strings.HasPrefix(attrs, `href="`) || !strings.HasSuffix(attrs, `"`) {
			return fmt.Errorf("tag a needs href")
		}
	case "span":
		if attrs != `class="tg-spoiler"` {
			return fmt.Errorf("tag span needs class tg-spoiler")
		}
	case "code":
		if attrs != "" && !strings.HasPrefix(attrs, `class="language-`) {
			return fmt.Errorf("bad attribute of code")
		}
	case "blockquote":
		if attrs != "" && attrs != "expandable" {
			return fmt.Errorf("bad attribute of blockquote")
		}
	default:
		if attrs != "" {
			return fmt.Errorf("tag %s takes no attributes", name)
		}
	}
	return nil
}

func decodeEntity(e string) (rune, bool) {
	switch e {
	case "lt":
		return '<', true
	case "gt":
		return '>', true
	case "amp":
		return '&', true
	case "quot":
		return '"', true
	}
	if !strings.HasPrefix(e, "#") {
		return 0, false
	}
	e = e[1:]
	base := 10
	if strings.HasPrefix(e, "x") || strings.HasPrefix(e, "X") {
		e, base = e[1:], 16
	}
	n, err := strconv.ParseUint(e, base, 32)
	if err != nil || n == 0 || n > 0x10FFFF {
		return 0, false
	}
	return rune(n), true
}

// Len is the length Telegram counts: UTF-16 code units.
func Len(s string) int {
	return len(utf16.Encode([]rune(s)))
}
