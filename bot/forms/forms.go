// Package forms shows what an MCP server asks a user in the middle of a
// tool call (see agent.Form) as cards, and takes their answers: a card
// the running turn sends, whose buttons and replies go to the agent out
// of band, as the chat's lane waits for the turn. A press is checked
// when pressed: only the turn's user may answer. A form asked in a group
// and answered in its user's private chat (see agent.OpenPrivately) has
// a second card there; the group's names the member and leads there,
// and shows nothing of the form. Who may use the bot at all is the bot's
// to check first.
package forms

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/bot/callback"
	"github.com/mcpgram/mcpgram/bot/render"
	"github.com/mcpgram/mcpgram/bot/startlink"
	"github.com/mcpgram/mcpgram/bot/telegram"
	"github.com/mcpgram/mcpgram/internal/keylock"
)

// An Agent takes the answers to forms; *agent.Forms is one.
type Agent interface {
	FormInput(ctx context.Context, caller mcpgram.Caller, id int64, in agent.FormInput) (*agent.Form, error)
}

// Telegram is what the cards are sent, edited and answered through;
// *telegram.Client is one.
type Telegram interface {
	SendHTML(ctx context.Context, to telegram.Place, replyTo int, html string, markup any) (tgbotapi.Message, error)
	SendLong(ctx context.Context, to telegram.Place, replyTo int, html string, markup any) (tgbotapi.Message, error)
	EditHTML(ctx context.Context, chatID int64, msgID int, html string, markup *tgbotapi.InlineKeyboardMarkup) error
	AnswerCallback(ctx context.Context, id, text string, alert bool)
	RemoveKeyboard(ctx context.Context, chatID int64, msgID int)
	ChatMember(ctx context.Context, chatID, user int64) (tgbotapi.ChatMember, error)
	Request(ctx context.Context, call tgbotapi.Chattable) (*tgbotapi.APIResponse, error)
}

// Options are the Cards' settings.
type Options struct {
	// BotName returns the bot's username, for the links to its private
	// chat; it is known once the bot asked Telegram (getMe).
	BotName func() string
	Logger  *slog.Logger
}

// Cards are the form cards of this instance.
type Cards struct {
	agent   Agent
	tg      Telegram
	botName func() string
	logger  *slog.Logger
	cards   Registry
	editing keylock.Locks // by form
}

// New returns the Cards giving answers to a, through tg.
func New(a Agent, tg Telegram, opts Options) *Cards {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.BotName == nil {
		opts.BotName = func() string { return "" }
	}
	return &Cards{agent: a, tg: tg, botName: opts.BotName, logger: opts.Logger}
}

// Show sends the card of f, which a call of user's turn in the
// conversation key asks, to place at.
func (c *Cards) Show(ctx context.Context, at telegram.Place, key string, user int64, f *agent.Form) {
	card := Card{ChatID: at.Chat, Key: key, User: user, Shown: f.Version}
	if privateElsewhere(f, at.Chat) {
		card.Who = c.memberName(ctx, at.Chat, user)
	}
	html, markup := c.cardOf(f, card)
	// Known before it is sent: an answer may arrive before the send
	// returns (see Registry.Answered).
	c.cards.Put(f.ID, card)
	m, err := c.tg.SendHTML(ctx, at, 0, html, markup)
	if err != nil {
		c.cards.DropIn(f.ID, at.Chat)
		c.logger.Error("send form", "chat", at, "form", f.ID, "err", err)
		return
	}
	card.MsgID = m.MessageID
	c.cards.Put(f.ID, card)
}

// Update shows f on its card in chatID: message msgID, or (0) the card
// this instance sent there, if any. Once f is closed, its other cards
// here show it too.
func (c *Cards) Update(ctx context.Context, chatID int64, msgID int, f *agent.Form) {
	// One edit of a form's cards at a time, and never back to an older
	// view: two inputs handled at once (typed answers, presses) may come
	// here in either order. Waited for even when ctx has ended: the
	// form closed by its call's end is shown as such.
	unlock, _ := c.editing.Lock(context.WithoutCancel(ctx), strconv.FormatInt(f.ID, 10)) // never ends early
	defer unlock()
	if f.Open() && !c.cards.Show(f.ID, chatID, f.Version) {
		return
	}
	card, _ := c.cards.Get(f.ID, chatID)
	card.ChatID = chatID
	if msgID != 0 {
		card.MsgID = msgID
	}
	cards := []Card{card}
	if !f.Open() {
		for _, o := range c.cards.All(f.ID) {
			if o.ChatID != chatID {
				cards = append(cards, o)
			}
		}
		c.cards.Drop(f.ID)
	}
	for _, card := range cards {
		if card.MsgID == 0 {
			continue // none here, or still being sent
		}
		html, markup := c.cardOf(f, card)
		if err := c.tg.EditHTML(ctx, card.ChatID, card.MsgID, html, markup); err != nil {
			c.logger.Debug("edit form", "chat", card.ChatID, "form", f.ID, "err", err)
		}
	}
}

// cardOf is f's card: in a group, for a form answered in private, the
// card that leads there; else the form itself.
func (c *Cards) cardOf(f *agent.Form, card Card) (string, *tgbotapi.InlineKeyboardMarkup) {
	if privateElsewhere(f, card.ChatID) {
		return privateCard(f, card.Who, startlink.URL(c.botName(), startlink.Form(f.ID)))
	}
	return formMessage(f, card.ChatID < 0)
}

// memberName is user as a group's card names them: a mention by id, with
// their first name as the group knows it (HTML).
func (c *Cards) memberName(ctx context.Context, chatID, user int64) string {
	name := "the member who asked"
	if m, err := c.tg.ChatMember(ctx, chatID, user); err == nil && m.User != nil && m.User.FirstName != "" {
		name = m.User.FirstName
	}
	return fmt.Sprintf(`<a href="tg://user?id=%d">%s</a>`, user, render.Shown(name))
}

// Press handles a form's button, pressed in the conversation key, out of
// band: the chat's lane waits for the turn whose call waits for this
// form.
func (c *Cards) Press(ctx context.Context, cq *tgbotapi.CallbackQuery, key string, data callback.Data) {
	chatID := cq.Message.Chat.ID
	f, err := c.agent.FormInput(ctx, caller(cq.From.ID, key), data.Pending, Input(data))
	switch {
	case errors.Is(err, agent.ErrNotYours):
		c.tg.AnswerCallback(ctx, cq.ID, "This form is for the person whose request it belongs to; only they can answer it.", true)
		return
	case errors.Is(err, agent.ErrStale):
		c.tg.AnswerCallback(ctx, cq.ID, "This form is no longer open.", true)
		c.tg.RemoveKeyboard(ctx, chatID, cq.Message.MessageID)
		return
	case err != nil:
		c.logger.Error("form input", "chat", chatID, "form", data.Pending, "err", err)
		c.tg.AnswerCallback(ctx, cq.ID, "Sorry, something went wrong.", true)
		return
	}
	c.tg.AnswerCallback(ctx, cq.ID, render.Visible(render.Shorten(f.Note, 180)), f.Note != "")
	c.Update(ctx, chatID, cq.Message.MessageID, f)
}

// Input is the agent's input for a form's button.
func Input(data callback.Data) agent.FormInput {
	in := agent.FormInput{Op: ops[data.Op], Option: data.Option, Step: data.Page}
	switch data.Op {
	case callback.FormSubmit, callback.FormDecline, callback.FormCancel:
		in.Step = -1
	}
	return in
}

// ops maps the buttons to the agent's inputs.
var ops = map[callback.FormOp]agent.FormOp{
	callback.FormChoose: agent.FormChoose, callback.FormToggle: agent.FormToggle, callback.FormDone: agent.FormDone,
	callback.FormDefault: agent.FormDefault, callback.FormNext: agent.FormNext, callback.FormBack: agent.FormBack,
	callback.FormSubmit: agent.FormSubmit, callback.FormDecline: agent.FormDecline, callback.FormCancel: agent.FormCancel,
}

// A Reply is what became of a message sent to a form (see Cards.Reply).
type Reply int

// What became of a message sent to a form.
const (
	// NoForm: the message answers no card of this instance.
	NoForm Reply = iota
	// Closed: it answered a form no longer open, or not its sender's,
	// and nothing was done with it.
	Closed
	// Taken: the form took it (or told its sender what did not do).
	Taken
)

// Reply gives the text of m, sent at place at in the conversation key, to
// the form it answers (see Registry.Answered), if any; the sender is told
// what did not do. Only the instance that showed the card takes a reply:
// it is where the call waits, as the chat's updates all go to the
// instance that leases the chat.
func (c *Cards) Reply(ctx context.Context, at telegram.Place, key string, m *tgbotapi.Message) Reply {
	if m.From == nil || m.Text == "" || m.IsCommand() {
		return NoForm
	}
	user, chatID := m.From.ID, m.Chat.ID
	id, ok := c.cards.Answered(key, user, m)
	if !ok {
		return NoForm
	}
	f, err := c.agent.FormInput(ctx, caller(user, key), id, agent.FormInput{Op: agent.FormType, Text: m.Text, Step: -1})
	switch {
	case errors.Is(err, agent.ErrNotYours), errors.Is(err, agent.ErrStale):
		c.cards.DropIn(id, chatID)
		return Closed
	case err != nil:
		c.logger.Error("form input", "chat", at, "err", err)
		if _, err := c.tg.SendLong(ctx, at, 0, "Sorry, something went wrong with the form; please try again.", nil); err != nil {
			c.logger.Error("send message", "chat", at, "err", err)
		}
		return Taken
	}
	if f.Note != "" {
		if _, err := c.tg.SendHTML(ctx, at, m.MessageID, "⚠️ "+render.Shown(f.Note)+" Try again.", nil); err != nil {
			c.logger.Debug("send form note", "chat", chatID, "err", err)
		}
	}
	if f.Mode == agent.ModeConnect || f.TypedSecret {
		// It holds a sign-in's code, or a password: out of the chat.
		c.deleteSecret(ctx, chatID, m.MessageID)
	}
	// An admin's sign-in, once done, is reconnected by whoever awaits it.
	c.Update(ctx, chatID, 0, f)
	return Taken
}

// deleteSecret deletes a message of the chat that holds a secret, where
// Telegram lets the bot (in a group, only with the right to).
func (c *Cards) deleteSecret(ctx context.Context, chatID int64, msgID int) {
	if _, err := c.tg.Request(ctx, tgbotapi.NewDeleteMessage(chatID, msgID)); err != nil {
		c.logger.Info("could not delete a message holding a sign-in's code or a secret", "chat", chatID, "err", err)
	}
}

// caller is the user of a conversation as the agent names them.
func caller(user int64, key string) mcpgram.Caller {
	return mcpgram.Caller{UserID: strconv.FormatInt(user, 10), ChatID: key}
}
