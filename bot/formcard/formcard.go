// Package formcard renders a form (package form) as a Telegram card: a
// message listing the fields and the answers so far, asking the current
// field, with its buttons: a choice's options and a yes/no as presses, a
// multi-choice as toggles, a default taken with one press, back and next,
// and Submit, Decline and Cancel always (Submit and Cancel alone where
// declining means nothing more than cancelling). A typed field is answered by
// typing (in groups, a reply to the card). The text stays within
// Telegram's limit whatever the schema, and every text from the schema is
// escaped, with every invisible or direction-changing character shown as
// its code point (render.Visible). It is pure: data in, HTML and buttons
// out.
package formcard

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram/bot/callback"
	"github.com/mcpgram/mcpgram/bot/render"
	"github.com/mcpgram/mcpgram/form"
)

// MaxOptionButtons is how many options of a choice are buttons; a choice
// with more is typed (by name or number), its options listed.
const MaxOptionButtons = 24

// Budgets, in runes, of the parts of a card: together well under
// Telegram's 4096 characters.
const (
	fieldsBudget = 1600
	valueLen     = 60
	labelLen     = 60
	buttonLen    = 30
	listedLen    = 600
)

// A Card is a form as the chat shows it.
type Card struct {
	// ID is the form's id, which the buttons carry.
	ID int64
	// Head is the card's first lines, HTML: who asks, and why.
	Head   string
	Fields *form.Form
	State  form.State
	// Note says why the last input changed nothing; "" for none.
	Note string
	// Group: typed answers are replies to the card.
	Group bool
	// Expires is when the form closes unanswered.
	Expires time.Time
	// Kind is the kind of the buttons' data: callback.Form (the default)
	// or callback.PromptForm.
	Kind callback.Kind
	// Suggestions are values offered for the current typed field, each a
	// button (FormChoose of its index).
	Suggestions []string
	// CancelOnly leaves Decline out: Cancel is the one way out of a form
	// whose asker tells the two apart not at all (a prompt's arguments).
	CancelOnly bool
	// Asker names the server that asks, for the warning of a form that
	// asks for a secret (form.Field.Secret); "" warns of none.
	Asker string
}

// Hidden stands for the value of a secret field, which a card never
// shows.
const Hidden = "••••"

// Text is the card's HTML.
func Text(c Card) string {
	var b strings.Builder
	b.WriteString(c.Head)
	if c.Asker != "" && slices.ContainsFunc(c.Fields.Fields, form.Field.Secret) {
		fmt.Fprintf(&b, "\n⚠️ <b>%s</b>, not mcpgram, asks you for a password, token or PIN. Give it only if you trust %[1]s with it: it goes to %[1]s alone, and this card never shows it.", shown(c.Asker))
	}
	b.WriteString("\n\n")
	b.WriteString(fieldLines(c))
	b.WriteString("\n\n")
	b.WriteString(ask(c))
	if c.Note != "" {
		b.WriteString("\n⚠️ " + shown(render.Shorten(c.Note, 300)))
	}
	if !c.Expires.IsZero() {
		fmt.Fprintf(&b, "\n⏳ <i>Open until %s UTC.</i>", c.Expires.UTC().Format("15:04"))
	}
	return b.String()
}

// fieldLines lists the fields: answered, current, still to come. Past the
// budget, the fields far from the current one are counted, not listed.
func fieldLines(c Card) string {
	lines := make([]string, len(c.Fields.Fields))
	for i, fd := range c.Fields.Fields {
		lines[i] = fieldLine(c, i, fd)
	}
	if n := runes(lines); n <= fieldsBudget {
		return strings.Join(lines, "\n")
	}
	lo, hi := max(0, c.State.Step-3), min(len(lines), c.State.Step+4)
	var out []string
	if lo > 0 {
		out = append(out, fmt.Sprintf("<i>… %d fields before</i>", lo))
	}
	out = append(out, lines[lo:hi]...)
	if hi < len(lines) {
		out = append(out, fmt.Sprintf("<i>… %d fields after</i>", len(lines)-hi))
	}
	return strings.Join(out, "\n")
}

func fieldLine(c Card, i int, fd form.Field) string {
	label := shown(render.Shorten(fd.Label(), labelLen))
	req := ""
	if fd.Required {
		req = " <i>(required)</i>"
	}
	if i == c.State.Step {
		line := "▶️ <b>" + label + "</b>" + req
		if fd.Description != "" {
			line += "\n      " + shown(fd.Description)
		}
		return line
	}
	if v, ok := c.Fields.Value(c.State, fd.Name); ok {
		return "✔️ " + label + ": " + value(fd, v)
	}
	if fd.Default != nil {
		return "◻️ " + label + req + " <i>(default: " + value(fd, fd.Default) + ")</i>"
	}
	return "◻️ " + label + req
}

// value is v, a value of fd, as a card shows it: a secret's, never.
func value(fd form.Field, v any) string {
	if fd.Secret() {
		return Hidden
	}
	return shown(render.Shorten(fd.Show(v), valueLen))
}

// ask is the line that asks for the current field.
func ask(c Card) string {
	fd, asking := c.Fields.Current(c.State)
	if !asking {
		if len(c.Fields.Fields) == 0 {
			return "Submit to agree, or decline."
		}
		return "All fields asked: check the answers, then <b>Submit</b>."
	}
	reply := ""
	if c.Group {
		reply = ", as a reply to this message"
	}
	switch {
	case fd.Kind.Typed() && len(c.Suggestions) > 0:
		return "✏️ Type " + render.Escape(fd.Hint()) + reply + ", or choose a suggestion."
	case fd.Kind.Typed():
		return "✏️ Type " + render.Escape(fd.Hint()) + reply + "."
	case fd.Kind == form.Boolean:
		return "Yes or no?"
	case len(fd.Options) > MaxOptionButtons:
		names := make([]string, len(fd.Options))
		for i, o := range fd.Options {
			names[i] = fmt.Sprintf("%d. %s", i+1, o.Label)
		}
		what := "one"
		if fd.Kind == form.Choices {
			what = "any, separated by commas"
		}
		return "✏️ Type the name or number of " + what + reply + ": " + shown(render.Shorten(strings.Join(names, ", "), listedLen))
	case fd.Kind == form.Choices:
		return "Choose any, then <b>Done</b>."
	}
	return "Choose one."
}

// Keyboard is the card's buttons.
func Keyboard(c Card) tgbotapi.InlineKeyboardMarkup {
	btn := func(label string, op callback.FormOp, opt int) tgbotapi.InlineKeyboardButton {
		kind := c.Kind
		if kind == 0 {
			kind = callback.Form
		}
		data := callback.Data{Kind: kind, Pending: c.ID, Page: c.State.Step, Op: op, Option: opt}.String()
		return tgbotapi.NewInlineKeyboardButtonData(label, data)
	}
	var rows [][]tgbotapi.InlineKeyboardButton
	if fd, asking := c.Fields.Current(c.State); asking {
		rows = append(rows, optionRows(c, fd, btn)...)
		if label := "Use default"; fd.Default != nil {
			if !fd.Secret() {
				label += ": " + render.Visible(render.Shorten(oneLine(fd.Show(fd.Default)), buttonLen))
			}
			rows = append(rows, tgbotapi.NewInlineKeyboardRow(btn(label, callback.FormDefault, 0)))
		}
	}
	var nav []tgbotapi.InlineKeyboardButton
	if c.State.Step > 0 {
		nav = append(nav, btn("◀ Back", callback.FormBack, 0))
	}
	if c.State.Step < len(c.Fields.Fields) {
		nav = append(nav, btn("Skip ▶", callback.FormNext, 0))
	}
	if len(nav) > 0 {
		rows = append(rows, nav)
	}
	end := []tgbotapi.InlineKeyboardButton{btn("✅ Submit", callback.FormSubmit, 0), btn("🚫 Decline", callback.FormDecline, 0), btn("✖️ Cancel", callback.FormCancel, 0)}
	if c.CancelOnly {
		end = slices.Delete(end, 1, 2)
	}
	rows = append(rows, end)
	return tgbotapi.NewInlineKeyboardMarkup(rows...)
}

// optionRows are the buttons of a choice, yes/no or multi-choice field,
// two to a row; none for a typed field, or for a choice of too many.
func optionRows(c Card, fd form.Field, btn func(string, callback.FormOp, int) tgbotapi.InlineKeyboardButton) [][]tgbotapi.InlineKeyboardButton {
	if fd.Kind.Typed() {
		return suggestionRows(c, btn)
	}
	if len(fd.Options) > MaxOptionButtons {
		return nil
	}
	cur, answered := c.Fields.Value(c.State, fd.Name)
	var buttons []tgbotapi.InlineKeyboardButton
	for i, o := range fd.Options {
		label := render.Visible(render.Shorten(oneLine(o.Label), buttonLen))
		switch fd.Kind {
		case form.Choices:
			mark := "☐ "
			list, _ := cur.([]string)
			if !answered {
				list, _ = fd.Default.([]string)
			}
			for _, v := range list {
				if v == o.Value {
					mark = "☑ "
				}
			}
			buttons = append(buttons, btn(mark+label, callback.FormToggle, i))
		default:
			if answered && fd.Show(cur) == o.Label {
				label = "• " + label
			}
			buttons = append(buttons, btn(label, callback.FormChoose, i))
		}
	}
	var rows [][]tgbotapi.InlineKeyboardButton
	for i := 0; i < len(buttons); i += 2 {
		rows = append(rows, buttons[i:min(i+2, len(buttons))])
	}
	if fd.Kind == form.Choices {
		rows = append(rows, tgbotapi.NewInlineKeyboardRow(btn("Done ✔", callback.FormDone, 0)))
	}
	return rows
}

// suggestionRows are the suggestions for a typed field, one to a row.
func suggestionRows(c Card, btn func(string, callback.FormOp, int) tgbotapi.InlineKeyboardButton) [][]tgbotapi.InlineKeyboardButton {
	var rows [][]tgbotapi.InlineKeyboardButton
	for i, v := range c.Suggestions {
		rows = append(rows, tgbotapi.NewInlineKeyboardRow(btn("💡 "+render.Visible(render.Shorten(oneLine(v), buttonLen)), callback.FormChoose, i)))
	}
	return rows
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// shown is what a server wrote as the user may read it: every invisible
// or direction-changing character as its code point, and escaped.
func shown(s string) string { return render.Escape(render.Visible(s)) }

func runes(lines []string) int {
	n := 0
	for _, l := range lines {
		n += utf8.RuneCountInString(l) + 1
	}
	return n
}
