// Package render turns the Markdown a model writes into the HTML subset
// Telegram accepts, and splits HTML and plain text into messages within
// Telegram's length limit. It is pure: text in, text out.
package render

import (
	"bytes"
	"fmt"
	"html"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/mcpgram/mcpgram/toolcall"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// MaxMessageLen is Telegram's limit on a message's visible text, in UTF-16
// code units, counted after HTML entities are parsed.
const MaxMessageLen = 4096

var markdown = goldmark.New(goldmark.WithExtensions(extension.Strikethrough, extension.Table, extension.Linkify))

// HTML turns the Markdown a model writes into Telegram's HTML subset.
// Tool calls and thinking are cut first, by package toolcall, which owns
// their syntax; everything that is not one of Telegram's tags is escaped,
// and a direction control shows as its code point (\u202E).
func HTML(md string) string {
	src := []byte(toolcall.Visible(md))
	doc := markdown.Parser().Parse(text.NewReader(src))
	r := &renderer{src: src}
	r.blocks(doc, "\n\n", 0)
	return strings.TrimSpace(r.b.String())
}

type renderer struct {
	src     []byte
	b       strings.Builder
	inQuote bool
}

// esc writes text of the model's, escaped, its direction controls shown
// (showBidi): what the chat shows is what the model wrote, in its order.
func (r *renderer) esc(s string) {
	_, _ = htmlEscaper.WriteString(&r.b, showBidi(s)) // a Builder does not fail
}

// htmlEscaper is built once: a Replacer builds its lookup tables (several
// KB) on first use, which per call was a tenth of the bot's allocations.
var htmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// Escape escapes text for Telegram HTML.
func Escape(s string) string {
	return htmlEscaper.Replace(s)
}

func (r *renderer) blocks(n ast.Node, sep string, depth int) {
	first := true
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if !first {
			r.b.WriteString(sep)
		}
		first = false
		r.block(c, depth)
	}
}

func (r *renderer) block(n ast.Node, depth int) {
	switch n := n.(type) {
	case *ast.Paragraph, *ast.TextBlock:
		r.inlines(n)
	case *ast.Heading:
		r.b.WriteString("<b>")
		r.inlines(n)
		r.b.WriteString("</b>")
	case *ast.ThematicBreak:
		r.b.WriteString("──────────")
	case *ast.FencedCodeBlock:
		lang := safeLang(string(n.Language(r.src)))
		if lang != "" {
			fmt.Fprintf(&r.b, `<pre><code class="language-%s">`, lang)
		} else {
			r.b.WriteString("<pre>")
		}
		r.lines(n)
		if lang != "" {
			r.b.WriteString("</code>")
		}
		r.b.WriteString("</pre>")
	case *ast.CodeBlock:
		r.b.WriteString("<pre>")
		r.lines(n)
		r.b.WriteString("</pre>")
	case *ast.HTMLBlock:
		// Raw HTML from the model is shown as text, escaped.
		var s strings.Builder
		for i := 0; i < n.Lines().Len(); i++ {
			seg := n.Lines().At(i)
			s.Write(seg.Value(r.src))
		}
		if n.HasClosure() {
			s.Write(n.ClosureLine.Value(r.src))
		}
		r.esc(strings.TrimRight(s.String(), "\n"))
	case *ast.Blockquote:
		if r.inQuote {
			r.blocks(n, "\n", depth)
			return
		}
		r.inQuote = true
		r.b.WriteString("<blockquote>")
		r.blocks(n, "\n", depth)
		r.b.WriteString("</blockquote>")
		r.inQuote = false
	case *ast.List:
		i := n.Start
		if i == 0 {
			i = 1
		}
		first := true
		for item := n.FirstChild(); item != nil; item = item.NextSibling() {
			if !first {
				r.b.WriteString("\n")
			}
			first = false
			r.b.WriteString(strings.Repeat("  ", depth))
			if n.IsOrdered() {
				fmt.Fprintf(&r.b, "%d. ", i)
				i++
			} else {
				r.b.WriteString("• ")
			}
			r.listItem(item, depth)
		}
	case *east.Table:
		r.table(n)
	default:
		if n.HasChildren() {
			r.blocks(n, "\n", depth)
		}
	}
}

func (r *renderer) listItem(item ast.Node, depth int) {
	first := true
	for c := item.FirstChild(); c != nil; c = c.NextSibling() {
		if !first {
			r.b.WriteString("\n")
		}
		if _, nested := c.(*ast.List); nested {
			r.block(c, depth+1)
		} else {
			if !first {
				r.b.WriteString(strings.Repeat("  ", depth+1))
			}
			r.block(c, depth+1)
		}
		first = false
	}
}

func (r *renderer) lines(n ast.Node) {
	var s strings.Builder
	for i := 0; i < n.Lines().Len(); i++ {
		seg := n.Lines().At(i)
		s.Write(seg.Value(r.src))
	}
	r.esc(strings.TrimRight(s.String(), "\n"))
}

// table renders a GFM table as aligned monospace text: Telegram has no tables.
func (r *renderer) table(t *east.Table) {
	var rows [][]string
	for row := t.FirstChild(); row != nil; row = row.NextSibling() {
		var cells []string
		for cell := row.FirstChild(); cell != nil; cell = cell.NextSibling() {
			cells = append(cells, plainInline(cell, r.src))
		}
		rows = append(rows, cells)
	}
	widths := map[int]int{}
	for _, row := range rows {
		for i, c := range row {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	r.b.WriteString("<pre>")
	for ri, row := range rows {
		if ri > 0 {
			r.b.WriteString("\n")
		}
		var line strings.Builder
		for i, c := range row {
			if i > 0 {
				line.WriteString(" | ")
			}
			line.WriteString(c + strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)))
		}
		r.esc(strings.TrimRight(line.String(), " "))
		if ri == 0 {
			var sep []string
			for i := range row {
				sep = append(sep, strings.Repeat("-", widths[i]))
			}
			r.b.WriteString("\n" + strings.Join(sep, "-|-"))
		}
	}
	r.b.WriteString("</pre>")
}

func plainInline(n ast.Node, src []byte) string {
	var b strings.Builder
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch c := c.(type) {
		case *ast.Text:
			b.WriteString(textValue(c.Segment.Value(src)))
		case *ast.String:
			b.Write(c.Value)
		case *ast.AutoLink:
			b.Write(c.Label(src))
		}
		return ast.WalkContinue, nil
	})
	return b.String()
}

func textValue(v []byte) string {
	v = util.UnescapePunctuations(v)
	v = util.ResolveNumericReferences(v)
	v = util.ResolveEntityNames(v)
	return string(v)
}

func (r *renderer) inlines(n ast.Node) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		r.inline(c)
	}
}

func (r *renderer) inline(n ast.Node) {
	switch n := n.(type) {
	case *ast.Text:
		v := n.Segment.Value(r.src)
		if n.IsRaw() {
			r.esc(string(v))
		} else {
			r.esc(textValue(v))
		}
		if n.SoftLineBreak() || n.HardLineBreak() {
			r.b.WriteString("\n")
		}
	case *ast.String:
		r.esc(string(n.Value))
	case *ast.CodeSpan:
		r.b.WriteString("<code>")
		var s bytes.Buffer
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			switch c := c.(type) {
			case *ast.Text:
				s.Write(c.Segment.Value(r.src))
			case *ast.String:
				s.Write(c.Value)
			}
		}
		r.esc(s.String())
		r.b.WriteString("</code>")
	case *ast.Emphasis:
		tag := "i"
		if n.Level >= 2 {
			tag = "b"
		}
		r.b.WriteString("<" + tag + ">")
		r.inlines(n)
		r.b.WriteString("</" + tag + ">")
	case *east.Strikethrough:
		r.b.WriteString("<s>")
		r.inlines(n)
		r.b.WriteString("</s>")
	case *ast.Link:
		r.link(string(n.Destination), func() { r.inlines(n) })
	case *ast.AutoLink:
		url := string(n.URL(r.src))
		label := string(n.Label(r.src))
		r.link(url, func() { r.esc(label) })
	case *ast.Image:
		// Telegram cannot inline images in text: link to it by its alt text.
		r.link(string(n.Destination), func() {
			alt := plainInline(n, r.src)
			if alt == "" {
				alt = "image"
			}
			r.esc(alt)
		})
	case *ast.RawHTML:
		var s strings.Builder
		for i := 0; i < n.Segments.Len(); i++ {
			seg := n.Segments.At(i)
			s.Write(seg.Value(r.src))
		}
		raw := s.String()
		switch strings.ToLower(strings.ReplaceAll(raw, " ", "")) {
		case "<br>", "<br/>":
			r.b.WriteString("\n")
		default:
			r.esc(raw)
		}
	default:
		r.inlines(n)
	}
}

// link writes a link whose body (its text) body writes. The user sees
// where a link goes: a link whose text is not its target (a word, or
// another address) shows as its text, then the target as the link. Only
// http, https and mailto become links: tg:// links act inside Telegram
// (open a chat, join a group, send as the user), which model text must
// not do; anything else keeps just its text.
func (r *renderer) link(url string, body func()) {
	lower := strings.ToLower(url)
	safe := strings.HasPrefix(lower, "http://") || strings.HasPrefix(lower, "https://") || strings.HasPrefix(lower, "mailto:")
	if !safe {
		body()
		return
	}
	outer := r.b
	r.b = strings.Builder{}
	body()
	label := r.b.String()
	r.b = outer
	href := `<a href="` + strings.ReplaceAll(Escape(hrefVisible(url)), `"`, "&quot;") + `">`
	if sameTarget(PlainText(label), url) {
		r.b.WriteString(href + label + "</a>")
		return
	}
	if strings.TrimSpace(PlainText(label)) != "" {
		r.b.WriteString(label + " (")
		defer r.b.WriteString(")")
	}
	r.b.WriteString(href)
	r.esc(Visible(url))
	r.b.WriteString("</a>")
}

// hrefVisible percent-encodes the hidden characters of a URL: the same
// address, without a character that would turn the rest around.
func hrefVisible(url string) string {
	var b strings.Builder
	for _, c := range url {
		if hidden(c) {
			for _, x := range []byte(string(c)) {
				fmt.Fprintf(&b, "%%%02X", x)
			}
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

// sameTarget reports whether a link's text is its target: the same
// address, but for the scheme, the case of the host, and a final slash.
func sameTarget(text, url string) bool {
	strip := func(s string) string {
		s = strings.TrimSpace(s)
		for _, scheme := range []string{"https://", "http://", "mailto:"} {
			if len(s) >= len(scheme) && strings.EqualFold(s[:len(scheme)], scheme) {
				return s[len(scheme):]
			}
		}
		return s
	}
	t, u := strip(text), strip(url)
	th, tp, _ := strings.Cut(t, "/")
	uh, up, _ := strings.Cut(u, "/")
	return t != "" && strings.EqualFold(th, uh) && strings.TrimSuffix(tp, "/") == strings.TrimSuffix(up, "/")
}

func safeLang(s string) string {
	var b strings.Builder
	for _, c := range s {
		if c < 128 && (c == '-' || c == '_' || c == '+' || c == '#' || c == '.' ||
			(c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
			b.WriteRune(c)
		}
	}
	if b.Len() > 32 {
		return ""
	}
	return b.String()
}

// PlainText returns what Telegram would show for an HTML text: tags
// removed, entities decoded. It is the fallback when Telegram rejects HTML.
func PlainText(h string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(h, '<')
		if i < 0 {
			b.WriteString(h)
			break
		}
		b.WriteString(h[:i])
		j := strings.IndexByte(h[i:], '>')
		if j < 0 {
			b.WriteString(h[i:])
			break
		}
		h = h[i+j+1:]
	}
	return html.UnescapeString(b.String())
}

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// A token of Telegram HTML: a tag, an entity, or one rune of text.
type token struct {
	s       string
	width   int // UTF-16 units the user sees
	tagName string
	closing bool
}

func tokenize(h string) []token {
	var toks []token
	for i := 0; i < len(h); {
		switch h[i] {
		case '<':
			if j := strings.IndexByte(h[i:], '>'); j > 0 {
				tag := h[i : i+j+1]
				inner := strings.Trim(tag, "<>/")
				name, _, _ := strings.Cut(inner, " ")
				toks = append(toks, token{s: tag, tagName: strings.ToLower(name), closing: strings.HasPrefix(tag, "</")})
				i += j + 1
				continue
			}
		case '&':
			if j := strings.IndexByte(h[i:], ';'); j > 0 && j < 10 {
				ent := h[i : i+j+1]
				toks = append(toks, token{s: ent, width: utf16Len(html.UnescapeString(ent))})
				i += j + 1
				continue
			}
		}
		r, size := utf8.DecodeRuneInString(h[i:])
		toks = append(toks, token{s: h[i : i+size], width: utf16.RuneLen(r)})
		if r == utf8.RuneError {
			toks[len(toks)-1].width = 1
		}
		i += size
	}
	return toks
}

// Split cuts Telegram HTML into parts of at most limit visible UTF-16
// units, preferring paragraph breaks, then line breaks, then spaces. Tags
// open at a cut are closed at the end of one part and reopened at the start
// of the next, so every part is balanced on its own.
func Split(h string, limit int) []string {
	toks := tokenize(h)
	var parts []string
	var stack []token // open tags at the start of the current part
	start := 0
	for start < len(toks) {
		width, end := 0, start
		para, line, space := -1, -1, -1
		for end < len(toks) {
			w := toks[end].width
			if width+w > limit {
				break
			}
			width += w
			if toks[end].s == "\n" {
				if end > start && toks[end-1].s == "\n" {
					para = end
				}
				line = end
			} else if toks[end].s == " " {
				space = end
			}
			end++
		}
		cut := end // exclusive
		if end < len(toks) {
			switch {
			case para > start:
				cut = para + 1
			case line > start:
				cut = line + 1
			case space > start:
				cut = space + 1
			}
			if cut <= start {
				cut = start + 1
			}
		}
		var b strings.Builder
		for _, t := range stack {
			b.WriteString(t.s)
		}
		for _, t := range toks[start:cut] {
			b.WriteString(t.s)
			if t.tagName == "" {
				continue
			}
			if t.closing {
				for k := len(stack) - 1; k >= 0; k-- {
					if stack[k].tagName == t.tagName {
						stack = append(stack[:k:k], stack[k+1:]...)
						break
					}
				}
			} else {
				stack = append(stack, t)
			}
		}
		for k := len(stack) - 1; k >= 0; k-- {
			b.WriteString("</" + stack[k].tagName + ">")
		}
		if part := strings.TrimSpace(b.String()); strings.TrimSpace(PlainText(part)) != "" {
			parts = append(parts, part)
		}
		start = cut
	}
	return parts
}

// SplitPlain cuts plain text into parts of at most limit UTF-16 units, at
// the same kinds of boundaries as Split.
func SplitPlain(s string, limit int) []string {
	parts := Split(Escape(s), limit)
	for i := range parts {
		parts[i] = PlainText(parts[i])
	}
	return parts
}

// Shorten cuts s to at most n runes, marking the cut with "…".
func Shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// Count says "1 tool" or "3 tools": n and noun, made plural with an s.
func Count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// Grouped writes n with commas between thousands: "12,345".
func Grouped(n int64) string {
	if n < 0 {
		return "-" + Grouped(-n)
	}
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
