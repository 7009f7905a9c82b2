package bot

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/bot/startlink"
)

// Answered in private (see agent.OpenPrivately): in a group every member
// sees the bot's cards, so a sign-in (a Connect, an admin's Sign in) and
// a server's form with fields to fill in are not shown there. The group
// gets a short card naming the member, with a deep link to the bot's
// private chat and Cancel; the link sends /start with the form's id, and
// the form opens there for that member alone, once. The sign-in's link
// and the form's fields never reach the group.

// IsGroup reports whether a chat (its key: its id, in decimal, and for a
// forum's topic "/" and the topic's) is a group, shared with others:
// Telegram gives groups, supergroups and channels negative ids, a user's
// private chat with the bot the user's id.
func IsGroup(chatID string) bool { return strings.HasPrefix(chatID, "-") }

// start answers /start: the greeting, or, with a deep link's payload,
// what the link asks.
func (b *Bot) start(ctx context.Context, m *message) {
	if payload := m.CommandArguments(); payload != "" {
		b.openPrivately(ctx, m, payload)
		return
	}
	b.say(ctx, m.at, b.startText(m.From.ID))
}

// openPrivately opens, in the private chat m was sent in, the form a deep
// link's payload names, for the user who sent it if it is theirs; any
// other payload, another's, one used or past its time changes nothing,
// and the user is told so.
func (b *Bot) openPrivately(ctx context.Context, m *message, payload string) {
	user := m.From.ID
	if !m.Chat.IsPrivate() {
		b.say(ctx, m.at, "That link opens in a private chat with me, not here, so nothing was done.")
		return
	}
	p, err := startlink.Parse(payload)
	if err != nil {
		b.say(ctx, m.at, "That link is not one of mine, so nothing was done.")
		return
	}
	f, err := b.parts.Forms.OpenPrivately(ctx, caller(user, m.key), p.Form, b.beginFor(user))
	switch {
	case errors.Is(err, agent.ErrNotYours):
		b.say(ctx, m.at, "That link belongs to another member's request, and only they can open it, so nothing was done.")
		return
	case errors.Is(err, agent.ErrOpened):
		b.say(ctx, m.at, "You opened that request here already (its card is above), so nothing was done.")
		return
	case errors.Is(err, agent.ErrStale):
		b.say(ctx, m.at, "That request is over or has expired, so nothing was done.")
		return
	case err != nil:
		b.logger.Warn("open a form in a private chat", "chat", m.at, "form", p.Form, "err", err)
		b.say(ctx, m.at, "That could not be opened just now (if it is a sign-in, the server's sign-in could not be reached or refused), so nothing was done; try the link again in a moment.")
		return
	}
	b.logger.Info("a group's form opened in its user's private chat", "form", f.ID, "user", strconv.FormatInt(user, 10))
	b.forms.Show(ctx, m.at, m.key, user, f)
}

// beginFor begins, for the user who opened a group's sign-in card in
// their private chat, the sign-in it asks for: their own Connect, or, for
// an admin, the operator's (checked again now).
func (b *Bot) beginFor(opener int64) agent.Begin {
	return func(ctx context.Context, server, user, redirectURI, tag string) (string, string, error) {
		if user != "" {
			return b.hub.BeginConnect(ctx, server, user, redirectURI, tag)
		}
		if !b.isAdmin(opener) {
			return "", "", errors.New("only admins sign the bot in")
		}
		return b.hub.SignIn(ctx, server, redirectURI, tag)
	}
}
