package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// What an approval card shows of the arguments. A person must see every
// argument they approve: the summary has one line per value, each key in
// full view and each value's start, so that 4,000 harmless characters in
// one argument cannot push another one (a path, a recipient) out of
// sight. The arguments in full are on the card too, in an expandable
// quote, or attached as a file when they are too long for a message.
const (
	// maxLeafLines is how many values the summary lists one by one; past
	// it, it lists the top-level arguments instead.
	maxLeafLines = 100
	// summaryBudget is roughly how many characters the summary's values
	// share; each value gets a share within [minValueRunes, maxValueRunes].
	summaryBudget = 2400
	minValueRunes = 40
	maxValueRunes = 400
	maxKeyRunes   = 80
)

// maxTextLines caps the lines a multi-line text shows in the summary.
const maxTextLines = 8

// An argLine is one line of the summary: where a value is, and the value
// as compact JSON; text is set when the value is a string of several
// lines, which reads better as the text it is.
type argLine struct {
	path, value string
	text        *string
}

// NoArguments reports whether raw, a call's arguments, holds none: empty,
// null, or an empty object.
func NoArguments(raw string) bool {
	switch strings.Join(strings.Fields(raw), "") {
	case "", "null", "{}":
		return true
	}
	return false
}

// Args renders the summary lines of a call's JSON arguments, and
// reports whether anything was shortened (so the card must offer the
// arguments in full). Arguments that are not a JSON object are shown as
// one value; a string of several lines is shown as text, in a quote.
// Keys and values go through Visible.
func Args(raw string) (html string, cut bool) {
	lines := argLines(raw)
	if len(lines) == 0 {
		return "<i>(no arguments)</i>", false
	}
	share := min(maxValueRunes, max(minValueRunes, summaryBudget/len(lines)))
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		if l.text != nil {
			text, n := clipText(*l.text, share, maxTextLines)
			cut = cut || n > 0
			fmt.Fprintf(&b, "• <b>%s</b>:\n<blockquote>%s", Escape(Visible(l.path)), Escape(Visible(text)))
			if n > 0 {
				fmt.Fprintf(&b, "\n<i>(+%d more characters)</i>", n)
			}
			b.WriteString("</blockquote>")
			continue
		}
		value, n := clip(l.value, share)
		cut = cut || n > 0
		fmt.Fprintf(&b, "• <b>%s</b>: <code>%s</code>", Escape(Visible(l.path)), Escape(Visible(value)))
		if n > 0 {
			fmt.Fprintf(&b, " <i>(+%d more characters)</i>", n)
		}
	}
	return b.String(), cut
}

// FullText renders a call's arguments in full as plain text, for an
// expandable quote: a line per value as in the summary, none shortened,
// each line of a multi-line text marked with "│ " so that no line of a
// value can pass for another argument. Keys and values go through
// Visible; the result still needs Escape.
func FullText(raw string) string {
	var b strings.Builder
	for i, l := range argLines(raw) {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(Visible(l.path) + ":")
		if l.text == nil {
			b.WriteString(" " + Visible(l.value))
			continue
		}
		for _, line := range strings.Split(Visible(*l.text), "\n") {
			b.WriteString("\n│ " + line)
		}
	}
	return b.String()
}

// argLines decodes raw and lists its values by path: every leaf, or the
// top-level values when there are too many leaves. No arguments, none.
func argLines(raw string) []argLine {
	if NoArguments(raw) {
		return nil
	}
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		v = raw
	}
	lines := leafLines("", v, nil)
	if len(lines) > maxLeafLines {
		lines = topLines(v)
	}
	return lines
}

// newLine is the line of value v at path: a multi-line string as text,
// anything else as compact JSON.
func newLine(path string, v any) argLine {
	if s, ok := v.(string); ok && strings.Contains(s, "\n") {
		return argLine{path: path, value: compact(v), text: &s}
	}
	return argLine{path: path, value: compact(v)}
}

// clipText keeps at most n runes and at most maxLines lines of s, and
// reports how many runes it dropped.
func clipText(s string, n, maxLines int) (string, int) {
	head := s
	if i := nthIndex(s, '\n', maxLines); i >= 0 {
		head = s[:i]
	}
	kept, dropped := clip(head, n)
	if dropped == 0 && head == s {
		return s, 0
	}
	shown := utf8.RuneCountInString(head) - dropped
	if dropped == 0 {
		kept += "…" // cut by lines alone
	}
	return kept, utf8.RuneCountInString(s) - shown
}

// nthIndex returns the index of the nth c in s, or -1.
func nthIndex(s string, c byte, nth int) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			if nth--; nth == 0 {
				return i
			}
		}
	}
	return -1
}

// leafLines lists every scalar of v (and every empty object or array)
// with its path, up to one past maxLeafLines.
func leafLines(path string, v any, out []argLine) []argLine {
	if len(out) > maxLeafLines {
		return out
	}
	switch x := v.(type) {
	case map[string]any:
		if len(x) > 0 {
			for _, k := range slices.Sorted(maps.Keys(x)) {
				out = leafLines(joinPath(path, k), x[k], out)
			}
			return out
		}
	case []any:
		if len(x) > 0 {
			for i, e := range x {
				out = leafLines(path+"["+strconv.Itoa(i)+"]", e, out)
			}
			return out
		}
	}
	if path == "" {
		path = "(value)"
	}
	return append(out, newLine(path, v))
}

// topLines lists the top-level arguments, each value whole as JSON.
func topLines(v any) []argLine {
	m, ok := v.(map[string]any)
	if !ok {
		return []argLine{newLine("(value)", v)}
	}
	out := make([]argLine, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, newLine(joinPath("", k), m[k]))
	}
	return out
}

var plainKey = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// joinPath adds key to path; a key that is not a plain word is quoted as
// a JSON string, so that no key can pass for punctuation of the card or
// another path.
func joinPath(path, key string) string {
	key, _ = clip(key, maxKeyRunes)
	if !plainKey.MatchString(key) {
		key = compact(key)
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

func compact(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// clip keeps the first n runes of s and reports how many it dropped.
func clip(s string, n int) (string, int) {
	total := utf8.RuneCountInString(s)
	if total <= n {
		return s, 0
	}
	r := []rune(s)
	return string(r[:n-1]) + "…", total - (n - 1)
}

// PrettyJSON indents JSON for reading, leaving other text as it is. The
// JSON is decoded and written again, as the executor decodes arguments
// before it sends them: a key given twice shows once, with the value that
// runs, and bytes that are not UTF-8 show as U+FFFD, as they are sent.
func PrettyJSON(s string) string {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return s
	}
	if _, err := dec.Token(); err != io.EOF {
		return s
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return s
	}
	return strings.TrimSuffix(out.String(), "\n")
}
