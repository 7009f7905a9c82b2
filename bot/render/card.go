package render

import (
	"fmt"
	"unicode/utf8"
)

// An ApprovalCard is the text of a card that asks a user to approve a
// tool call or a resource read, or to consent to a call. Every name and
// value on it goes through Visible: the user judges what runs.
type ApprovalCard struct {
	Server, Tool string
	// ToolTitle is the tool's title, if its server gives one: shown
	// beside its name, never in its place, since a server chooses it.
	ToolTitle string
	// URI is the resource to read, when Tool is empty.
	URI string
	// Arguments are the call's arguments, as JSON.
	Arguments string
	// Consent marks a call that needs the user's own agreement.
	Consent bool
	// Footer (HTML) ends the card, such as when it expires.
	Footer string
	// File names the attachment that holds the arguments in full when
	// they are too long to quote on the card.
	File string
}

// HTML renders the card, and the arguments in full as the content of the
// attachment named File when they do not fit on the card (nil when they
// do, or need no more than the summary).
func (c ApprovalCard) HTML() (html string, attach []byte) {
	var summary string
	var cut bool
	html = c.title()
	if c.Tool != "" {
		summary, cut = Args(c.Arguments)
		html += "\n" + summary
	}
	footer := ""
	if c.Footer != "" {
		footer = "\n" + c.Footer
	}
	if !cut {
		return html + footer, nil
	}
	full := Visible(PrettyJSON(c.Arguments))
	quoted := html + "\n<blockquote expandable>" + Escape(full) + "</blockquote>" + footer
	if utf8.RuneCountInString(PlainText(quoted)) <= MaxMessageLen {
		return quoted, nil
	}
	return html + "\n<i>The arguments in full are in " + Escape(c.File) + ", below.</i>" + footer, []byte(full)
}

// title says what the card asks: a tool to run, a resource to read, or a
// call that needs the user's own consent.
func (c ApprovalCard) title() string {
	server, tool := Escape(Visible(c.Server)), Escape(Visible(c.Tool))
	switch {
	case c.Tool == "":
		return fmt.Sprintf("🔐 <b>Approval needed</b>\nRead <code>%s</code> from <b>%s</b>.", Escape(Visible(c.URI)), server)
	case c.Consent:
		return fmt.Sprintf("🔏 <b>Your consent is needed</b>\n<b>%s</b> acts on this only with your own agreement. Run <code>%s</code> with:", server, tool)
	}
	named := "<code>" + tool + "</code>"
	if c.ToolTitle != "" && c.ToolTitle != c.Tool {
		named += " (" + Escape(Visible(Shorten(c.ToolTitle, 80))) + ")"
	}
	return fmt.Sprintf("🔐 <b>Approval needed</b>\nRun %s on <b>%s</b> with:", named, server)
}
