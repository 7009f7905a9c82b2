package render

import (
	"fmt"
	"html"
	"regexp"
	"strings"
)

// A frame is an open tag of the chat's HTML and what was written inside
// it so far.
type frame struct {
	tag, href, lang string
	b               strings.Builder
}

// Document is the Markdown of a file that holds what a model wrote
// (answer.md), made from the text the chat shows, h as HTML writes it,
// never from what the model wrote. So a file holds what the chat holds
// and nothing it leaves out: a link shows its target in full beside its
// text (<https://…>; only http, https and mailto are links, a tg:// or
// javascript: one keeps just its text), an image is a link to it by its
// alt text, not a picture a viewer fetches, a direction control shows as
// its code point, raw HTML is text. Everything else Markdown would read
// as markup (an emphasis mark, a bracket, an entity, a heading's #) is
// escaped, so that a viewer shows the chat's text; bold, italics,
// strikethrough, code, quotes and line breaks are written as Markdown.
func Document(h string) string {
	toks := tokenize(h)
	stack := []*frame{{}}
	// blank: the line being written holds nothing but spaces so far, so
	// what comes next may start a block.
	blank := true
	for i, t := range toks {
		top := stack[len(stack)-1]
		switch {
		case t.tagName != "" && !t.closing:
			stack = append(stack, openFrame(t))
		case t.tagName != "":
			if len(stack) > 1 && stack[len(stack)-1].tag == t.tagName {
				stack = stack[:len(stack)-1]
				closeFrame(top, stack[len(stack)-1])
			}
		case literal(stack):
			top.b.WriteString(html.UnescapeString(t.s))
			blank = t.s == "\n"
		case t.s == "\n" || t.s == "\r":
			// The chat breaks a line at every line feed; Markdown only
			// where a line ends in two spaces, or a blank line follows.
			if i+1 < len(toks) && toks[i+1].s != "\n" && !blank {
				top.b.WriteString("  ")
			}
			top.b.WriteString("\n")
			blank = true
		default:
			text := html.UnescapeString(t.s)
			writeText(&top.b, text, blank)
			blank = blank && strings.TrimLeft(text, " ") == ""
		}
	}
	for len(stack) > 1 { // HTML's tags are balanced; in case not
		top := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		closeFrame(top, stack[len(stack)-1])
	}
	return stack[0].b.String()
}

// openFrame opens the frame of tag token t.
func openFrame(t token) *frame {
	f := &frame{tag: t.tagName}
	if _, v, ok := strings.Cut(t.s, `href="`); ok {
		v, _, _ = strings.Cut(v, `"`)
		f.href = html.UnescapeString(v)
	}
	if _, v, ok := strings.Cut(t.s, `class="language-`); ok {
		f.lang, _, _ = strings.Cut(v, `"`)
	}
	return f
}

// literal reports whether text inside stack is code, written as it is.
func literal(stack []*frame) bool {
	for _, f := range stack {
		if f.tag == "code" || f.tag == "pre" {
			return true
		}
	}
	return false
}

// closeFrame writes f, closed, into its parent.
func closeFrame(f, parent *frame) {
	inner := f.b.String()
	out := &parent.b
	switch f.tag {
	case "a":
		out.WriteString("<" + autolinkTarget(f.href) + ">")
	case "pre":
		fence := strings.Repeat("`", max(3, longestRun(inner, '`')+1))
		out.WriteString(fence + f.lang + "\n" + strings.TrimSuffix(inner, "\n") + "\n" + fence)
	case "code":
		if parent.tag == "pre" {
			parent.lang = f.lang
			out.WriteString(inner)
			return
		}
		// A code span is one line: a line break in it could start a
		// block (an HTML one, say) before the span is read.
		inner = strings.NewReplacer("\n", " ", "\r", " ").Replace(inner)
		fence := strings.Repeat("`", longestRun(inner, '`')+1)
		pad := ""
		if strings.HasPrefix(inner, "`") || strings.HasSuffix(inner, "`") {
			pad = " "
		}
		out.WriteString(fence + pad + inner + pad + fence)
	case "blockquote":
		for i, line := range strings.Split(strings.TrimRight(inner, "\n"), "\n") {
			if i > 0 {
				out.WriteString("\n")
			}
			if line == "" {
				out.WriteString(">")
			} else {
				out.WriteString("> " + line)
			}
		}
	case "b", "strong":
		emphasize(out, inner, "**")
	case "i", "em":
		emphasize(out, inner, "*")
	case "s", "strike", "del":
		emphasize(out, inner, "~~")
	default: // u, ins, span, tg-spoiler: no such mark in Markdown
		out.WriteString(inner)
	}
}

// markup are the characters Markdown may read as markup anywhere in a
// line; lineMarkup those it may at a line's start (after spaces).
const (
	markup     = "\\`*_[]<>&~|"
	lineMarkup = "#-+="
)

// writeText writes text of the chat as Markdown text, each character
// that could be markup escaped; atStart says whether the line holds
// nothing yet but spaces.
func writeText(b *strings.Builder, text string, atStart bool) {
	for i, r := range text {
		if strings.ContainsRune(markup, r) || i == 0 && atStart && strings.ContainsRune(lineMarkup, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
}

// emphasize writes inner between marks, its spaces at either end outside
// them (Markdown takes "** x**" for text).
func emphasize(b *strings.Builder, inner, mark string) {
	core := strings.TrimSpace(inner)
	if core == "" {
		b.WriteString(inner)
		return
	}
	lead := inner[:strings.Index(inner, core)]
	b.WriteString(lead + mark + core + mark + inner[len(lead)+len(core):])
}

// longestRun is the length of the longest run of c in s.
func longestRun(s string, c byte) int {
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return longest
}

// entity matches what a Markdown reader may decode as a character even
// in an autolink (cmark does): &#x202E; &amp; …
var entity = regexp.MustCompile(`&(#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});`)

// autolinkTarget is href as an autolink (<…>) can hold it: white space,
// angle brackets and control characters percent-encoded, and the & of
// what reads as an entity, which would otherwise bring back the
// character the chat shows as its code.
func autolinkTarget(href string) string {
	href = entity.ReplaceAllStringFunc(href, func(e string) string { return "%26" + e[1:] })
	var b strings.Builder
	for i := 0; i < len(href); i++ {
		c := href[i]
		if c <= ' ' || c == '<' || c == '>' || c == 0x7F {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}
