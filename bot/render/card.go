package render

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/toolsearch"
)

// An ApprovalCard is the text of a card that asks a user to approve a
// tool call or a resource read, or to consent to a call. Every name and
// value on it goes through Visible: the user judges what runs.
type ApprovalCard struct {
	Server, Tool string
	// ToolTitle is the tool's title, if its server gives one: shown
	// beside its name, never in its place, since a server chooses it.
	ToolTitle string
	// ServerTitle is the server's title, if it gives one: shown beside
	// its name, likewise.
	ServerTitle string
	// URI is the resource to read, when Tool is empty.
	URI string
	// Arguments are the call's arguments, as JSON.
	Arguments string
	// Consent marks a call that needs the user's own agreement.
	Consent bool
	// Hints are what the tool's server says of it, shown as its claim.
	Hints mcpgram.Hints
	// Footer (HTML) ends the card, such as when it expires.
	Footer string
	// File names the attachment that holds the arguments in full when
	// they are too long to quote on the card.
	File string
	// Lookalikes are the tools of other servers that look like Tool
	// (toolsearch.Lookalikes): the card then says first which server
	// the call goes to, and names them.
	Lookalikes []toolsearch.Lookalike
}

// CardFor is the card of a call of tool on server (a read of uri when tool
// is ""), with what the catalog cat says of them: their titles, the
// tool's hints, and the tools of other servers that look like it. Every
// front end shows this card: Telegram as HTML, the terminal as Text.
func CardFor(cat mcpgram.Catalog, server, tool, uri, arguments string, consent bool) ApprovalCard {
	c := ApprovalCard{Server: server, Tool: tool, URI: uri, Arguments: arguments, Consent: consent}
	s, ok := cat.Server(server)
	if !ok {
		return c
	}
	c.ServerTitle = s.Title
	if tool == "" {
		return c
	}
	if t, ok := s.Tool(tool); ok {
		c.ToolTitle, c.Hints = t.Title, t.Hints
	}
	c.Lookalikes = toolsearch.Lookalikes(cat, server, tool)
	return c
}

// Text renders the card for a terminal: the words of HTML as plain text,
// a quote indented, and, where the card cuts a value, the arguments in
// full after it (a terminal has no message length to keep to). Names and
// values go through Visible, as on the card: an escape sequence a server
// or the model wrote does not reach the terminal raw.
func (c ApprovalCard) Text() string {
	html, cut := c.body()
	text := plainQuoted(html)
	if cut {
		text += "\nIn full:\n" + Visible(PrettyJSON(c.Arguments))
	}
	if c.Footer != "" {
		text += "\n" + PlainText(c.Footer)
	}
	return text
}

// plainQuoted is PlainText of h with each line of a quote indented.
func plainQuoted(h string) string {
	const open, end = "<blockquote>", "</blockquote>"
	var b strings.Builder
	for {
		i := strings.Index(h, open)
		j := strings.Index(h, end)
		if i < 0 || j < i {
			b.WriteString(PlainText(h))
			return b.String()
		}
		b.WriteString(PlainText(h[:i]))
		b.WriteString("  " + strings.ReplaceAll(PlainText(h[i+len(open):j]), "\n", "\n  "))
		h = h[j+len(end):]
	}
}

// HTML renders the card, and the arguments in full as the content of the
// attachment named File when they do not fit on the card (nil when they
// do, or need no more than the summary). The card ends with "\n" and the
// Footer, when there is one.
func (c ApprovalCard) HTML() (html string, attach []byte) {
	html, cut := c.body()
	footer := ""
	if c.Footer != "" {
		footer = "\n" + c.Footer
	}
	if !cut {
		return html + footer, nil
	}
	quoted := html + "\n<i>In full:</i>\n<blockquote expandable>" + Escape(FullText(c.Arguments)) + "</blockquote>" + footer
	if utf8.RuneCountInString(PlainText(quoted)) <= MaxMessageLen {
		return quoted, nil
	}
	return html + "\n<i>The arguments in full are in " + Escape(c.File) + ", below.</i>" + footer, []byte(Visible(PrettyJSON(c.Arguments)))
}

// body is the card but its footer and the arguments in full, and whether
// a value on it was shortened.
func (c ApprovalCard) body() (html string, cut bool) {
	server, tool := c.server(), Escape(Visible(c.Tool))
	if c.Tool == "" {
		return fmt.Sprintf("🔐 <b>Approval needed</b>\nRead <code>%s</code> from %s.", Escape(Visible(c.URI)), server), false
	}
	if html, cut, ok := c.remember(); ok {
		return c.warnLookalikes(html), cut
	}
	with := " with:\n"
	summary, cut := Args(c.Arguments)
	if NoArguments(c.Arguments) {
		with, summary = " with no arguments.", ""
	}
	if c.Consent {
		html = fmt.Sprintf("🔏 <b>Your consent is needed</b>\n%s acts on this only with your own agreement. Run %s%s%s", server, c.named(tool), with, summary)
	} else {
		html = fmt.Sprintf("🔐 <b>Approval needed</b>\nRun %s on %s%s%s", c.named(tool), server, with, summary)
	}
	if line := HintsLine(c.Hints); line != "" {
		html += "\n" + line
	}
	return c.warnLookalikes(html), cut
}

// maxLookalikes bounds the lookalikes a card names.
const maxLookalikes = 3

// warnLookalikes puts, under the first line of a tool's card html, the
// server its call goes to and the other servers whose tools look like
// it, when there are any.
func (c ApprovalCard) warnLookalikes(html string) string {
	if len(c.Lookalikes) == 0 {
		return html
	}
	var others []string
	for _, l := range c.Lookalikes[:min(len(c.Lookalikes), maxLookalikes)] {
		other := "<b>" + Escape(Visible(l.Server)) + "</b>"
		if l.Tool != c.Tool {
			other += " (as <code>" + Escape(Visible(l.Tool)) + "</code>)"
		}
		others = append(others, other)
	}
	if n := len(c.Lookalikes) - maxLookalikes; n > 0 {
		others = append(others, Count(n, "other server"))
	}
	line := fmt.Sprintf("⚠️ <b>Check the server: this call goes to %s.</b> A tool like it is also offered by %s.", Escape(Visible(c.Server)), strings.Join(others, ", "))
	head, rest, _ := strings.Cut(html, "\n")
	return head + "\n" + line + "\n" + rest
}

// maxMemoryRunes and maxMemoryLines bound what the memory card quotes of
// the text to remember; the rest is in the arguments in full.
const (
	maxMemoryRunes = 1500
	maxMemoryLines = 20
)

// remember renders the consent card of a memory store (the bundled
// memory server's tool, or any tool named memory that needs consent to
// store) as the question it is: the text to remember as text, then any
// other argument. ok is false for any other call.
func (c ApprovalCard) remember() (html string, cut, ok bool) {
	var args map[string]any
	dec := json.NewDecoder(strings.NewReader(c.Arguments))
	dec.UseNumber()
	if !c.Consent || c.Tool != "memory" || dec.Decode(&args) != nil || dec.More() {
		return "", false, false
	}
	content, isText := args["content"].(string)
	if op, _ := args["operation"].(string); op != "store" || !isText {
		return "", false, false
	}
	shown, n := clipText(content, maxMemoryRunes, maxMemoryLines)
	var b strings.Builder
	fmt.Fprintf(&b, "🧠 <b>Remember this?</b>\n<blockquote>%s", Escape(Visible(shown)))
	if n > 0 {
		fmt.Fprintf(&b, "\n<i>(+%d more characters)</i>", n)
	}
	b.WriteString("</blockquote>")
	delete(args, "content")
	delete(args, "operation")
	if len(args) > 0 {
		rest, _ := json.Marshal(args)
		summary, more := Args(string(rest))
		b.WriteString("\n" + summary)
		n += btoi(more)
	}
	fmt.Fprintf(&b, "\n<i>Asked by <code>%s</code> on <b>%s</b>, which stores it only if you agree.</i>", Escape(Visible(c.Tool)), Escape(Visible(c.Server)))
	if line := HintsLine(c.Hints); line != "" {
		b.WriteString("\n" + line)
	}
	return b.String(), n > 0, true
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// HintsLine says in words what a server says of its tool (MCP's tool
// annotations), labelled as the server's claim; "" when it said nothing.
// A read-only tool's other hints say nothing more, as MCP defines them.
func HintsLine(h mcpgram.Hints) string {
	var says []string
	is := func(b *bool, v bool) bool { return b != nil && *b == v }
	switch {
	case is(h.ReadOnly, true):
		says = append(says, "changes nothing")
	case is(h.Destructive, true):
		says = append(says, "may delete or overwrite")
	case is(h.Destructive, false):
		says = append(says, "adds, but deletes and overwrites nothing")
	case is(h.ReadOnly, false):
		says = append(says, "may change things")
	}
	if !is(h.ReadOnly, true) {
		switch {
		case is(h.Idempotent, true):
			says = append(says, "calling it again changes nothing more")
		case is(h.Idempotent, false):
			says = append(says, "each call acts again")
		}
	}
	switch {
	case is(h.OpenWorld, true):
		says = append(says, "reaches the outside world")
	case is(h.OpenWorld, false):
		says = append(says, "keeps to its own data")
	}
	if len(says) == 0 {
		return ""
	}
	return "ℹ️ <i>Its server says this tool " + strings.Join(says, "; ") + " (the server's claim, not checked).</i>"
}

// server is the server's name (bold), with its title beside it where it
// has one of its own: never in its place, as the server chooses it.
func (c ApprovalCard) server() string {
	named := "<b>" + Escape(Visible(c.Server)) + "</b>"
	if c.ServerTitle != "" && c.ServerTitle != c.Server {
		named += " (" + Escape(Visible(Shorten(c.ServerTitle, 80))) + ")"
	}
	return named
}

// named is the tool's name (tool, escaped) as code, with its title beside
// it where it has one of its own: never in its place, as the server
// chooses it.
func (c ApprovalCard) named(tool string) string {
	named := "<code>" + tool + "</code>"
	if c.ToolTitle != "" && c.ToolTitle != c.Tool {
		named += " (" + Escape(Visible(Shorten(c.ToolTitle, 80))) + ")"
	}
	return named
}
