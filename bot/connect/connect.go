// Package connect is the sign-ins a chat carries: an admin's sign-in of
// the operator to a server, begun from /servers and awaited on its card;
// a group's form or sign-in opened in its user's private chat by a deep
// link (see agent.OpenPrivately); and a sign-in's address pasted when no
// sign-in waits for it, which is deleted. In a group every member sees
// the bot's cards, so a sign-in (a Connect, an admin's Sign in) and a
// server's form with fields to fill in are not shown there: the group
// gets a short card naming the member, with a deep link to the bot's
// private chat and Cancel (see package forms); the link sends /start
// with the form's id, and the form opens there for that member alone,
// once. The sign-in's link and the form's fields never reach the group.
// Who may use the bot, and who is an admin, is the bot's to check first.
package connect

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"strconv"
	"strings"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/bot/startlink"
	"github.com/mcpgram/mcpgram/bot/telegram"
)

// An Agent opens the sign-ins' cards and waits for them; *agent.Agent's
// parts are one: agent.Connections for SignIn and AwaitSignIn,
// agent.Forms for OpenPrivately.
type Agent interface {
	SignIn(ctx context.Context, caller mcpgram.Caller, server string, begin func(ctx context.Context, redirectURI, tag string) (authURL, host string, err error)) (*agent.Form, error)
	AwaitSignIn(ctx context.Context, id int64) (*agent.Form, error)
	OpenPrivately(ctx context.Context, caller mcpgram.Caller, id int64, begin agent.Begin) (*agent.Form, error)
}

// A Hub begins sign-ins and reconnects a server signed in to; *hub.Hub
// is one.
type Hub interface {
	SignIn(ctx context.Context, server, redirectURI, tag string) (authURL, host string, err error)
	BeginConnect(ctx context.Context, server, user, redirectURI, tag string) (authURL, host string, err error)
	Restart(ctx context.Context, server string) error
}

// Cards show the sign-ins' cards; *forms.Cards is one.
type Cards interface {
	Show(ctx context.Context, at telegram.Place, key string, user int64, f *agent.Form)
	Update(ctx context.Context, chatID int64, msgID int, f *agent.Form)
}

// Telegram is what the sign-ins talk through; *telegram.Client is one.
type Telegram interface {
	SendLong(ctx context.Context, to telegram.Place, replyTo int, html string, markup any) (tgbotapi.Message, error)
	AnswerCallback(ctx context.Context, id, text string, alert bool)
	Request(ctx context.Context, call tgbotapi.Chattable) (*tgbotapi.APIResponse, error)
}

// Options are the settings of SignIns.
type Options struct {
	// IsAdmin reports whether a user may sign the bot in to a server;
	// nil: nobody may.
	IsAdmin func(user int64) bool
	Logger  *slog.Logger
}

// SignIns are the sign-ins of the chats this instance serves.
type SignIns struct {
	agent   Agent
	hub     Hub
	cards   Cards
	tg      Telegram
	isAdmin func(int64) bool
	logger  *slog.Logger
}

// New returns the SignIns opened through a, begun at h, shown on cards,
// talking through tg.
func New(a Agent, h Hub, cards Cards, tg Telegram, opts Options) *SignIns {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.IsAdmin == nil {
		opts.IsAdmin = func(int64) bool { return false }
	}
	return &SignIns{agent: a, hub: h, cards: cards, tg: tg, isAdmin: opts.IsAdmin, logger: opts.Logger}
}

// say sends html to place at.
func (s *SignIns) say(ctx context.Context, at telegram.Place, html string) {
	if _, err := s.tg.SendLong(ctx, at, 0, html, nil); err != nil {
		s.logger.Error("send message", "chat", at, "err", err)
	}
}

// looksLikeSignIn reports whether text is an address a sign-in's
// browser came back to mcpgram at (its callback path, with a state and
// a code).
func looksLikeSignIn(text string) bool {
	u, err := url.Parse(strings.TrimSpace(text))
	if err != nil || u.Path != mcpgram.CallbackPath {
		return false
	}
	q := u.Query()
	return q.Get("state") != "" && (q.Get("code") != "" || q.Get("error") != "")
}

// Stray takes a message m, sent at place at, that is a sign-in's address
// when no sign-in waits for it (its card closed, or none): it holds a
// sign-in's code, so it is deleted and never goes to the model. It
// reports whether m was one.
func (s *SignIns) Stray(ctx context.Context, at telegram.Place, m *tgbotapi.Message) bool {
	if !looksLikeSignIn(m.Text) {
		return false
	}
	if _, err := s.tg.Request(ctx, tgbotapi.NewDeleteMessage(m.Chat.ID, m.MessageID)); err != nil {
		s.logger.Info("could not delete a message holding a sign-in's code or a secret", "chat", m.Chat.ID, "err", err)
	}
	s.say(ctx, at, "That looks like a sign-in address, but no sign-in of yours waits for it here, so nothing was done with it.")
	return true
}

// SignIn opens, for the admin who pressed a server's Sign in button on
// /servers at place at, in the conversation key, the card of the
// operator's sign-in to it: the same card, redirect and paste-back as a
// user's connection, for every chat. It returns the card's form, for
// Await, and false when it could not (the press was answered).
func (s *SignIns) SignIn(ctx context.Context, cq *tgbotapi.CallbackQuery, at telegram.Place, key, server string) (int64, bool) {
	user := cq.From.ID
	f, err := s.agent.SignIn(ctx, caller(user, key), server, func(ctx context.Context, redirectURI, tag string) (string, string, error) {
		return s.hub.SignIn(ctx, server, redirectURI, tag)
	})
	if err != nil {
		s.logger.Warn("begin the operator's sign-in", "server", server, "err", err)
		s.tg.AnswerCallback(ctx, cq.ID, "Could not start the sign-in: the server's sign-in could not be reached or refused (the log says why).", true)
		return 0, false
	}
	s.tg.AnswerCallback(ctx, cq.ID, "", false)
	s.cards.Show(ctx, at, key, user, f)
	return f.ID, true
}

// Await waits, on the instance that showed it, for the admin's sign-in
// card id to close, however it does: an address pasted here (which the
// form's card takes), the browser back at PUBLIC_URL on any instance,
// Cancel, or the clock. It shows the outcome on the card, if not shown
// yet, and once signed in reconnects the server here (the other
// instances retry on their own). It stops waiting when ctx ends.
func (s *SignIns) Await(ctx context.Context, at telegram.Place, id int64) {
	f, err := s.agent.AwaitSignIn(ctx, id)
	if err != nil {
		if ctx.Err() == nil {
			s.logger.Error("wait for the operator's sign-in", "form", id, "err", err)
		}
		return
	}
	s.cards.Update(ctx, at.Chat, 0, f)
	if f.Outcome == agent.FormAccepted {
		s.signedIn(ctx, at, f)
	}
}

// signedIn reconnects the server an admin just signed in to from the
// chat.
func (s *SignIns) signedIn(ctx context.Context, at telegram.Place, f *agent.Form) {
	if err := s.hub.Restart(ctx, f.Server); err != nil {
		s.logger.Warn("reconnect after the operator's sign-in", "server", f.Server, "err", err)
		s.say(ctx, at, "Signed in, but "+f.Server+" did not reconnect; /servers says why.")
		return
	}
	s.say(ctx, at, "Signed in; "+f.Server+" is reconnected.")
}

// OpenPrivately opens, in the chat at place at where user sent it (in
// the conversation key; private tells whether it is their private
// chat), the form a deep link's payload names, for the user if it is
// theirs; any other payload, another's, one used or past its time
// changes nothing, and the user is told so.
func (s *SignIns) OpenPrivately(ctx context.Context, at telegram.Place, key string, user int64, private bool, payload string) {
	if !private {
		s.say(ctx, at, "That link opens in a private chat with me, not here, so nothing was done.")
		return
	}
	p, err := startlink.Parse(payload)
	if err != nil {
		s.say(ctx, at, "That link is not one of mine, so nothing was done.")
		return
	}
	f, err := s.agent.OpenPrivately(ctx, caller(user, key), p.Form, s.beginFor(user))
	switch {
	case errors.Is(err, agent.ErrNotYours):
		s.say(ctx, at, "That link belongs to another member's request, and only they can open it, so nothing was done.")
		return
	case errors.Is(err, agent.ErrOpened):
		s.say(ctx, at, "You opened that request here already (its card is above), so nothing was done.")
		return
	case errors.Is(err, agent.ErrStale):
		s.say(ctx, at, "That request is over or has expired, so nothing was done.")
		return
	case err != nil:
		s.logger.Warn("open a form in a private chat", "chat", at, "form", p.Form, "err", err)
		s.say(ctx, at, "That could not be opened just now (if it is a sign-in, the server's sign-in could not be reached or refused), so nothing was done; try the link again in a moment.")
		return
	}
	s.logger.Info("a group's form opened in its user's private chat", "form", f.ID, "user", strconv.FormatInt(user, 10))
	s.cards.Show(ctx, at, key, user, f)
}

// beginFor begins, for the user who opened a group's sign-in card in
// their private chat, the sign-in it asks for: their own Connect, or, for
// an admin, the operator's (checked again now).
func (s *SignIns) beginFor(opener int64) agent.Begin {
	return func(ctx context.Context, server, user, redirectURI, tag string) (string, string, error) {
		if user != "" {
			return s.hub.BeginConnect(ctx, server, user, redirectURI, tag)
		}
		if !s.isAdmin(opener) {
			return "", "", errors.New("only admins sign the bot in")
		}
		return s.hub.SignIn(ctx, server, redirectURI, tag)
	}
}

// caller is the user of a conversation as the agent names them.
func caller(user int64, key string) mcpgram.Caller {
	return mcpgram.Caller{UserID: strconv.FormatInt(user, 10), ChatID: key}
}
