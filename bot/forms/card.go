package forms

import (
	"fmt"
	"net/url"
	"strings"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
	"golang.org/x/net/idna"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/bot/callback"
	"github.com/mcpgram/mcpgram/bot/formcard"
	"github.com/mcpgram/mcpgram/bot/render"
)

// MaxShownMessage bounds the server's message on a card.
const MaxShownMessage = 1500

// privateElsewhere reports whether f's card in chatID is a group's card
// of a form answered in private.
func privateElsewhere(f *agent.Form, chatID int64) bool { return f.Private && chatID < 0 }

// formMessage is f's card: its text and, while open, its buttons.
func formMessage(f *agent.Form, group bool) (string, *tgbotapi.InlineKeyboardMarkup) {
	if f.Mode == agent.ModeConnect {
		return connectCard(f)
	}
	head := formHead(f)
	if !f.Open() {
		return head + "\n\n" + formOutcome(f), nil
	}
	if f.Mode == mcpgram.ElicitURL {
		return urlCard(f, head)
	}
	c := formcard.Card{ID: f.ID, Head: head, Fields: f.Fields, State: f.State, Note: f.Note, Group: group, Expires: f.ExpiresAt, Asker: f.Server}
	kb := formcard.Keyboard(c)
	return formcard.Text(c), &kb
}

// formHead names who asks, during what, and shows what they say.
func formHead(f *agent.Form) string {
	var b strings.Builder
	icon := "📝"
	if f.Mode == mcpgram.ElicitURL {
		icon = "🔗"
	}
	fmt.Fprintf(&b, "%s <b>%s</b> asks you", icon, render.Shown(f.Server))
	switch {
	case f.Tool != "":
		fmt.Fprintf(&b, ", during <code>%s</code>", render.Shown(f.Tool))
	case f.URI != "":
		fmt.Fprintf(&b, ", reading <code>%s</code>", render.Shown(render.Shorten(f.URI, 80)))
	}
	b.WriteString(":")
	if msg := strings.TrimSpace(f.Message); msg != "" {
		b.WriteString("\n<blockquote expandable>" + render.Shown(render.Shorten(msg, MaxShownMessage)) + "</blockquote>")
	}
	if f.Mode != mcpgram.ElicitURL {
		fmt.Fprintf(&b, "\n<i>Your answers go to %s, not to the assistant.</i>", render.Shown(f.Server))
	}
	return b.String()
}

// urlCard asks the user to visit a page: the full domain first, the URL
// itself, and a button that opens it, named after the host as
// render.ButtonHost cuts it; nothing is opened for the user.
func urlCard(f *agent.Form, head string) (string, *tgbotapi.InlineKeyboardMarkup) {
	host := pageHost(f.URL)
	var b strings.Builder
	b.WriteString(head)
	fmt.Fprintf(&b, "\n\nIt is <b>%s</b>, not this bot, that asks you to open a page on:\n<b>%s</b>", render.Shown(f.Server), render.Shown(host))
	fmt.Fprintf(&b, "\n<code>%s</code>", render.Shown(render.Shorten(f.URL, 500)))
	b.WriteString("\nNothing is opened for you. Press <b>Done</b> once you have finished there.")
	if !f.ExpiresAt.IsZero() {
		fmt.Fprintf(&b, "\n⏳ <i>Open until %s UTC.</i>", f.ExpiresAt.UTC().Format("15:04"))
	}
	data := func(op callback.FormOp) string {
		return callback.Data{Kind: callback.Form, Pending: f.ID, Op: op}.String()
	}
	open := "Open the page"
	if h := render.ButtonHost(f.URL, render.MaxButtonHost); h != "" {
		open = "Open " + h
	}
	kb := tgbotapi.NewInlineKeyboardMarkup(
		tgbotapi.NewInlineKeyboardRow(tgbotapi.NewInlineKeyboardButtonURL(open, f.URL)),
		tgbotapi.NewInlineKeyboardRow(
			tgbotapi.NewInlineKeyboardButtonData("✅ Done", data(callback.FormSubmit)),
			tgbotapi.NewInlineKeyboardButtonData("🚫 Decline", data(callback.FormDecline)),
			tgbotapi.NewInlineKeyboardButtonData("✖️ Cancel", data(callback.FormCancel))),
	)
	return b.String(), &kb
}

// pageHost is the host a URL leads to, as it would be typed: an
// international name also in the letters DNS resolves (xn--), which tell
// look-alikes apart.
func pageHost(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	host := u.Hostname()
	if ascii, err := idna.ToASCII(host); err == nil && ascii != host {
		return host + " (" + ascii + ")"
	}
	return host
}

// formOutcome is the line a closed card ends with.
func formOutcome(f *agent.Form) string {
	switch f.Outcome {
	case agent.FormAccepted:
		if f.Mode == mcpgram.ElicitURL {
			return "✅ <i>Done.</i>"
		}
		return "✅ <i>Sent to " + render.Shown(f.Server) + ".</i>"
	case agent.FormDeclined:
		return "🚫 <i>Declined.</i>"
	case agent.FormCancelled:
		return "✖️ <i>Cancelled.</i>"
	case agent.FormExpired:
		return "⌛ <i>Nobody answered in time; " + render.Shown(f.Server) + " was told so.</i>"
	case agent.FormStopped:
		return "⏹ <i>The call ended before the form was answered.</i>"
	}
	return "<i>Closed.</i>"
}

// connectCard asks the user to connect their own account to a server
// (agent.ModeConnect): it names the server and its full domain, says it
// is mcpgram that asks, and has the sign-in as a URL button (nothing is
// opened for the user) and Cancel. Without a public URL the browser ends
// on an address that does not load, which the user sends here.
func connectCard(f *agent.Form) (string, *tgbotapi.InlineKeyboardMarkup) {
	var b strings.Builder
	host := pageHost("https://" + f.Host)
	fmt.Fprintf(&b, "🔑 <b>Connect your account to %s</b>\n\n", render.Shown(f.Server))
	fmt.Fprintf(&b, "mcpgram asks you to connect your own account to the server <b>%s</b> at:\n<b>%s</b>\n", render.Shown(f.Server), render.Shown(host))
	b.WriteString("Its calls for you will carry your account's access, and nobody else's.")
	if !f.Open() {
		b.WriteString("\n\n" + connectOutcome(f))
		return b.String(), nil
	}
	if f.PasteBack {
		b.WriteString("\n\nPress <b>Connect</b> and sign in. Your browser then ends on a page that does not load (its address starts with <code>http://127.0.0.1/</code>): copy that whole address and send it here.")
	} else {
		b.WriteString("\n\nPress <b>Connect</b> and sign in; this card changes once you have.")
	}
	if !f.ExpiresAt.IsZero() {
		fmt.Fprintf(&b, "\n⏳ <i>Open until %s UTC.</i>", f.ExpiresAt.UTC().Format("15:04"))
	}
	rows := [][]tgbotapi.InlineKeyboardButton{}
	if u, err := url.Parse(f.URL); err == nil && (u.Scheme == "https" || u.Scheme == "http") {
		rows = append(rows, tgbotapi.NewInlineKeyboardRow(tgbotapi.NewInlineKeyboardButtonURL("🔑 Connect", f.URL)))
	}
	cancel := callback.Data{Kind: callback.Form, Pending: f.ID, Op: callback.FormCancel}.String()
	rows = append(rows, tgbotapi.NewInlineKeyboardRow(tgbotapi.NewInlineKeyboardButtonData("✖️ Cancel", cancel)))
	kb := tgbotapi.NewInlineKeyboardMarkup(rows...)
	return b.String(), &kb
}

// connectOutcome is the line a closed connect card ends with.
func connectOutcome(f *agent.Form) string {
	if f.Operator {
		switch f.Outcome {
		case agent.FormAccepted:
			return "✅ <i>Signed in, for every chat.</i>"
		case agent.FormExpired:
			return "⌛ <i>Not signed in in time.</i>"
		case agent.FormStopped:
			return "⏹ <i>The bot stopped before you signed in.</i>"
		}
	}
	switch f.Outcome {
	case agent.FormAccepted:
		return "✅ <i>Connected.</i>"
	case agent.FormDeclined:
		return "🚫 <i>Not connected.</i>"
	case agent.FormExpired:
		return "⌛ <i>Not connected in time; the call was cancelled.</i>"
	case agent.FormStopped:
		return "⏹ <i>The call ended before you connected.</i>"
	}
	return "<i>Closed.</i>"
}

// privateCard is, in a group, the card of a form answered in its user's
// private chat: whose it is (who, HTML) and what asks; while open, a
// button to the private chat (link) and Cancel; once closed, how it
// ended. Nothing else of the form shows: no sign-in link, field or
// answer.
func privateCard(f *agent.Form, who, link string) (string, *tgbotapi.InlineKeyboardMarkup) {
	if who == "" {
		who = "The member who asked"
	}
	var b strings.Builder
	switch {
	case f.Mode == agent.ModeConnect && f.Operator:
		fmt.Fprintf(&b, "🔑 %s: sign in to <b>%s</b> for every chat.", who, render.Shown(f.Server))
	case f.Mode == agent.ModeConnect:
		fmt.Fprintf(&b, "🔑 %s: <b>%s</b> asks you to connect your own account.", who, render.Shown(f.Server))
	case f.Tool != "":
		fmt.Fprintf(&b, "📝 %s: <b>%s</b> asks you something, during <code>%s</code>.", who, render.Shown(f.Server), render.Shown(f.Tool))
	default:
		fmt.Fprintf(&b, "📝 %s: <b>%s</b> asks you something.", who, render.Shown(f.Server))
	}
	if !f.Open() {
		if f.Mode == agent.ModeConnect {
			return b.String() + "\n\n" + connectOutcome(f), nil
		}
		return b.String() + "\n\n" + formOutcome(f), nil
	}
	what := "Answer it"
	if f.Mode == agent.ModeConnect {
		what = "Sign in"
	}
	fmt.Fprintf(&b, "\n\n%s in our private chat, where nobody else sees it: press <b>Open private chat</b>, then <b>Start</b>. Only you can open it.", what)
	if !f.ExpiresAt.IsZero() {
		fmt.Fprintf(&b, "\n⏳ <i>Open until %s UTC.</i>", f.ExpiresAt.UTC().Format("15:04"))
	}
	cancel := callback.Data{Kind: callback.Form, Pending: f.ID, Op: callback.FormCancel}.String()
	kb := tgbotapi.NewInlineKeyboardMarkup(
		tgbotapi.NewInlineKeyboardRow(tgbotapi.NewInlineKeyboardButtonURL("🔒 Open private chat", link)),
		tgbotapi.NewInlineKeyboardRow(tgbotapi.NewInlineKeyboardButtonData("✖️ Cancel", cancel)),
	)
	return b.String(), &kb
}
