package bot

import (
	"context"

	"github.com/mcpgram/mcpgram/bot/callback"
	"github.com/mcpgram/mcpgram/bot/forms"
)

// Forms are what a server asks the user in the middle of a tool call
// (see package forms): the bot checks who may press or reply, and routes
// both out of band, as the chat's lane waits for the turn.

// handleFormPress handles a form's button, out of band: the chat's lane
// waits for the turn whose call waits for this form.
func (b *Bot) handleFormPress(ctx context.Context, q *query, data callback.Data) {
	if b.admitPress(ctx, q.CallbackQuery) {
		b.forms.Press(ctx, q.CallbackQuery, q.key, data)
	}
}

// formText gives what m says to the form it answers, if any, and reports
// whether it did (or m was a stray sign-in's address).
func (b *Bot) formText(ctx context.Context, m *message) bool {
	switch b.forms.Reply(ctx, m.at, m.key, m.Message) {
	case forms.Taken:
		return true
	case forms.Closed:
		return b.signIns.Stray(ctx, m.at, m.Message)
	}
	return false
}

// handleFormText handles, out of band, a message from a user a call on
// this instance waits for: it goes to their form. If the form closed
// meanwhile, it is a message like any other, whose turn the agent runs
// once the chat's running turn is over.
func (b *Bot) handleFormText(ctx context.Context, m *message) {
	if !b.admit(ctx, m, b.addressed(m.Message)) {
		return
	}
	if b.formText(ctx, m) || b.signIns.Stray(ctx, m.at, m.Message) {
		return
	}
	b.handleAdmitted(ctx, m)
}
