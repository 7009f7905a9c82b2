package bot

import (
	"context"
	"errors"
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
	"github.com/mcpgram/mcpgram/bot/startlink"
	"github.com/mcpgram/mcpgram/bot/telegram"
)

// Forms are what a server asks the user in the middle of a tool call (see
// agent.Form): a card the running turn sends, whose buttons and replies
// go to the agent out of band, as the chat's lane waits for the turn. A
// press is checked when pressed: only the turn's user may answer.

// maxShownMessage bounds the server's message on a card.
const maxShownMessage = 1500

// showForm sends the card of f, which a call of user's turn in the
// conversation key asks, to place at.
func (b *Bot) showForm(ctx context.Context, at telegram.Place, key string, user int64, f *agent.Form) {
	c := formCard{chatID: at.Chat, key: key, user: user}
	if privateElsewhere(f, at.Chat) {
		c.who = b.memberName(ctx, at.Chat, user)
	}
	html, markup := b.cardOf(f, c)
	// Known before it is sent: an answer may arrive before the send
	// returns (see answered).
	b.formCards.put(f.ID, c)
	m, err := b.tg.SendHTML(ctx, at, 0, html, markup)
	if err != nil {
		b.formCards.dropIn(f.ID, at.Chat)
		b.logger.Error("send form", "chat", at, "form", f.ID, "err", err)
		return
	}
	c.msgID = m.MessageID
	b.formCards.put(f.ID, c)
}

// updateForm shows f on its card in chatID: message msgID, or (0) the
// card this instance sent there, if any. Once f is closed, its other
// cards here show it too.
func (b *Bot) updateForm(ctx context.Context, chatID int64, msgID int, f *agent.Form) {
	c, _ := b.formCards.get(f.ID, chatID)
	c.chatID = chatID
	if msgID != 0 {
		c.msgID = msgID
	}
	cards := []formCard{c}
	if !f.Open() {
		for _, o := range b.formCards.all(f.ID) {
			if o.chatID != chatID {
				cards = append(cards, o)
			}
		}
		b.formCards.drop(f.ID)
	}
	for _, c := range cards {
		if c.msgID == 0 {
			continue // none here, or still being sent
		}
		html, markup := b.cardOf(f, c)
		if err := b.tg.EditHTML(ctx, c.chatID, c.msgID, html, markup); err != nil {
			b.logger.Debug("edit form", "chat", c.chatID, "form", f.ID, "err", err)
		}
	}
}

// cardOf is f's card c: in a group, for a form answered in private, the
// card that leads there; else the form itself.
func (b *Bot) cardOf(f *agent.Form, c formCard) (string, *tgbotapi.InlineKeyboardMarkup) {
	if privateElsewhere(f, c.chatID) {
		return privateCard(f, c.who, startlink.URL(b.self.UserName, startlink.Form(f.ID)))
	}
	return formMessage(f, c.chatID < 0)
}

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
	fmt.Fprintf(&b, "%s <b>%s</b> asks you", icon, shown(f.Server))
	switch {
	case f.Tool != "":
		fmt.Fprintf(&b, ", during <code>%s</code>", shown(f.Tool))
	case f.URI != "":
		fmt.Fprintf(&b, ", reading <code>%s</code>", shown(render.Shorten(f.URI, 80)))
	}
	b.WriteString(":")
	if msg := strings.TrimSpace(f.Message); msg != "" {
		b.WriteString("\n<blockquote expandable>" + shown(render.Shorten(msg, maxShownMessage)) + "</blockquote>")
	}
	if f.Mode != mcpgram.ElicitURL {
		fmt.Fprintf(&b, "\n<i>Your answers go to %s, not to the assistant.</i>", shown(f.Server))
	}
	return b.String()
}

// shown is what a server wrote as the user may read it: every invisible
// or direction-changing character as its code point, and escaped.
func shown(s string) string { return render.Escape(render.Visible(s)) }

// urlCard asks the user to visit a page: the full domain first, the URL
// itself, and a button that opens it, named after the host as
// render.ButtonHost cuts it; nothing is opened for the user.
func urlCard(f *agent.Form, head string) (string, *tgbotapi.InlineKeyboardMarkup) {
	host := pageHost(f.URL)
	var b strings.Builder
	b.WriteString(head)
	fmt.Fprintf(&b, "\n\nIt is <b>%s</b>, not this bot, that asks you to open a page on:\n<b>%s</b>", shown(f.Server), shown(host))
	fmt.Fprintf(&b, "\n<code>%s</code>", shown(render.Shorten(f.URL, 500)))
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
		return "✅ <i>Sent to " + shown(f.Server) + ".</i>"
	case agent.FormDeclined:
		return "🚫 <i>Declined.</i>"
	case agent.FormCancelled:
		return "✖️ <i>Cancelled.</i>"
	case agent.FormExpired:
		return "⌛ <i>Nobody answered in time; " + shown(f.Server) + " was told so.</i>"
	case agent.FormStopped:
		return "⏹ <i>The call ended before the form was answered.</i>"
	}
	return "<i>Closed.</i>"
}

// handleFormPress handles a form's button, out of band: the chat's lane
// waits for the turn whose call waits for this form.
func (b *Bot) handleFormPress(ctx context.Context, q *query, data callback.Data) {
	cq := q.CallbackQuery
	user, chatID := cq.From.ID, cq.Message.Chat.ID
	if !b.isAllowed(user) {
		b.tg.AnswerCallback(ctx, cq.ID, "Sorry, this bot is private.", true)
		return
	}
	if !b.allowPress(ctx, cq) {
		return
	}
	in := agent.FormInput{Op: formOps[data.Op], Option: data.Option, Step: data.Page}
	switch data.Op {
	case callback.FormSubmit, callback.FormDecline, callback.FormCancel:
		in.Step = -1
	}
	f, err := b.parts.Forms.FormInput(ctx, caller(user, q.key), data.Pending, in)
	switch {
	case errors.Is(err, agent.ErrNotYours):
		b.tg.AnswerCallback(ctx, cq.ID, "This form is for the person whose request it belongs to; only they can answer it.", true)
		return
	case errors.Is(err, agent.ErrStale):
		b.tg.AnswerCallback(ctx, cq.ID, "This form is no longer open.", true)
		b.tg.RemoveKeyboard(ctx, chatID, cq.Message.MessageID)
		return
	case err != nil:
		b.logger.Error("form input", "chat", chatID, "form", data.Pending, "err", err)
		b.tg.AnswerCallback(ctx, cq.ID, "Sorry, something went wrong.", true)
		return
	}
	b.tg.AnswerCallback(ctx, cq.ID, render.Visible(render.Shorten(f.Note, 180)), f.Note != "")
	b.updateForm(ctx, chatID, cq.Message.MessageID, f)
}

// formOps maps the buttons to the agent's inputs.
var formOps = map[callback.FormOp]agent.FormOp{
	callback.FormChoose: agent.FormChoose, callback.FormToggle: agent.FormToggle, callback.FormDone: agent.FormDone,
	callback.FormDefault: agent.FormDefault, callback.FormNext: agent.FormNext, callback.FormBack: agent.FormBack,
	callback.FormSubmit: agent.FormSubmit, callback.FormDecline: agent.FormDecline, callback.FormCancel: agent.FormCancel,
}

// formText gives what m says to the form it answers (see
// formCards.answered), if any, and reports whether it did; the sender is
// told what did not do. Only the instance that showed the card takes a
// reply: it is where the call waits, as the chat's updates all go to the
// instance that leases the chat.
func (b *Bot) formText(ctx context.Context, m *message) bool {
	if m.From == nil || m.Text == "" || m.IsCommand() {
		return false
	}
	user, chatID := m.From.ID, m.Chat.ID
	id, ok := b.formCards.answered(m.key, user, m.Message)
	if !ok {
		return false
	}
	f, err := b.parts.Forms.FormInput(ctx, caller(user, m.key), id, agent.FormInput{Op: agent.FormType, Text: m.Text, Step: -1})
	switch {
	case errors.Is(err, agent.ErrNotYours), errors.Is(err, agent.ErrStale):
		b.formCards.dropIn(id, chatID)
		return b.straySignIn(ctx, m)
	case err != nil:
		b.logger.Error("form input", "chat", m.at, "err", err)
		b.say(ctx, m.at, "Sorry, something went wrong with the form; please try again.")
		return true
	}
	if f.Note != "" {
		if _, err := b.tg.SendHTML(ctx, m.at, m.MessageID, "⚠️ "+shown(f.Note)+" Try again.", nil); err != nil {
			b.logger.Debug("send form note", "chat", chatID, "err", err)
		}
	}
	if f.Mode == agent.ModeConnect || f.TypedSecret {
		// It holds a sign-in's code, or a password: out of the chat.
		b.deleteMessage(ctx, chatID, m.MessageID)
	}
	// An admin's sign-in, once done, is reconnected by awaitSignIn.
	b.updateForm(ctx, chatID, 0, f)
	return true
}

// handleFormText handles, out of band, a message from a user a call on
// this instance waits for: it goes to their form. If the form closed
// meanwhile, it is a message like any other, whose turn the agent runs
// once the chat's running turn is over.
func (b *Bot) handleFormText(ctx context.Context, m *message) {
	if !b.admit(ctx, m, b.addressed(m.Message)) {
		return
	}
	if b.formText(ctx, m) || b.straySignIn(ctx, m) {
		return
	}
	b.handleAdmitted(ctx, m)
}
