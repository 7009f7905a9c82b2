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
// as markup (an emphasis mark, a bracket, an entity, a heading's #, a
// list's number) is escaped, so that a viewer shows the chat's text:
// the only blocks are paragraphs, the chat's quotes and its code, each
// fence at the start of a line of its own. Bold, italics,
// strikethrough, code, quotes and line breaks are written as Markdown.
func Document(h string) string {
	toks := tokenize(h)
	w := &docWriter{stack: []*frame{{}}, line: lineEmpty}
	for i, t := range toks {
		next := ""
		if i+1 < len(toks) {
			next = toks[i+1].s
		}
		w.token(t, next)
	}
	for len(w.stack) > 1 { // HTML's tags are balanced; in case not
		w.close()
	}
	return w.stack[0].b.String()
}

// What the line being written holds so far: what comes next may start a
// block while it holds nothing but spaces, or a list while it holds
// spaces and digits.
const (
	lineEmpty  = iota // nothing yet
	lineSpaces        // only spaces
	lineDigits        // spaces, then digits
	lineText          // more
)

// A docWriter writes the chat's HTML as Markdown, token by token.
type docWriter struct {
	stack []*frame
	line  int
}

func (w *docWriter) top() *frame { return w.stack[len(w.stack)-1] }

// token writes t, the token before next.
func (w *docWriter) token(t token, next string) {
	top := w.top()
	switch {
	case (t.tagName == "pre" || t.tagName == "blockquote") && !t.closing:
		// A fence or a quote opens a line of its own, whatever the chat
		// put before it on its line (a list's bullet, its indent).
		if w.line != lineEmpty {
			top.b.WriteString("\n")
		}
		w.stack = append(w.stack, openFrame(t))
	case t.tagName != "" && !t.closing:
		w.stack = append(w.stack, openFrame(t))
	case t.tagName != "":
		if len(w.stack) > 1 && top.tag == t.tagName {
			w.close()
			w.line = lineText
			if t.tagName == "pre" && next != "\n" && next != "" {
				w.top().b.WriteString("\n") // and closes its own line
				w.line = lineEmpty
			}
		}
	case literal(w.stack):
		top.b.WriteString(html.UnescapeString(t.s))
	case t.s == "\n" || t.s == "\r":
		// The chat breaks a line at every line feed; Markdown only
		// where a line ends in two spaces, or a blank line follows.
		if next != "\n" && next != "" && w.line != lineEmpty && w.line != lineSpaces {
			top.b.WriteString("  ")
		}
		top.b.WriteString("\n")
		w.line = lineEmpty
	default:
		for _, r := range html.UnescapeString(t.s) {
			w.text(&top.b, r)
		}
	}
}

// close closes the innermost frame, writing it into the one around it.
func (w *docWriter) close() {
	f := w.top()
	w.stack = w.stack[:len(w.stack)-1]
	closeFrame(f, w.top())
}

// text writes r of the chat's text, escaped where Markdown could read it
// as markup: anywhere (markup), at the start of a line (lineMarkup), or
// after a line's number (a list's 1. or 1)). A line's leading spaces are
// no-break spaces, which indent as the chat does without making code.
func (w *docWriter) text(b *strings.Builder, r rune) {
	switch {
	case r == ' ' && (w.line == lineEmpty || w.line == lineSpaces):
		b.WriteRune('\u00A0')
		w.line = lineSpaces
		return
	case r >= '0' && r <= '9' && w.line != lineText:
		b.WriteRune(r)
		w.line = lineDigits
		return
	case strings.ContainsRune(markup, r),
		w.line != lineDigits && w.line != lineText && strings.ContainsRune(lineMarkup, r),
		w.line == lineDigits && (r == '.' || r == ')'):
		b.WriteByte('\\')
	}
	b.WriteRune(r)
	w.line = lineText
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
// line; lineMarkup those it may at a line's start (after spaces): a
// heading, a list item, a heading's underline.
const (
	markup     = "\\`*_[]<>&~|"
	lineMarkup = "#-+="
)

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
// in an autolink (cmark does): &#x202E; &amp; …, and any &# at all, since
// an HTML reader takes a number without its semicolon too (&#x202E).
var entity = regexp.MustCompile(`&(#|[A-Za-z][A-Za-z0-9]{1,31};)`)

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
