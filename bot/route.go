package bot

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/bot/callback"
	"github.com/mcpgram/mcpgram/bot/commands"
	"github.com/mcpgram/mcpgram/bot/reply"
	"github.com/mcpgram/mcpgram/bot/telegram"
	"github.com/mcpgram/mcpgram/bot/updates"
	"github.com/mcpgram/mcpgram/dispatch"
	"github.com/mcpgram/mcpgram/llm"
	"github.com/mcpgram/mcpgram/store"
)

// route turns an inbox item into a job for the dispatch queue. Messages
// and presses run in their lane, in order: their chat's, or in a forum
// their topic's (see topic.go); what must not wait behind a running turn
// (/cancel, /servers buttons, buttons that cannot be valid) runs out of
// band.
func (b *Bot) route(it store.InboxItem) dispatch.Job {
	u, err := updates.Decode(it.Payload)
	if err != nil {
		b.logger.Error("undecodable update in inbox; dropping it", "update_id", it.UpdateID, "err", err)
		return dispatch.Job{}
	}
	topic := updates.Topic(it.Payload)
	switch {
	case u.Message != nil && u.Message.Chat != nil:
		return b.messageJob(it.UpdateID, u.Message, telegram.Place{Chat: u.Message.Chat.ID, Topic: topic})
	case u.CallbackQuery != nil:
		cq := u.CallbackQuery
		data, err := callback.Decode(cq.Data)
		if err != nil || cq.From == nil || cq.Message == nil || cq.Message.Chat == nil {
			return b.invalidJob(cq)
		}
		return b.pressJob(cq, data, telegram.Place{Chat: cq.Message.Chat.ID, Topic: topic})
	}
	// Edits, channel posts, member changes: nothing to answer.
	return dispatch.Job{}
}

// invalidJob answers a press of a button that cannot be valid (any more).
func (b *Bot) invalidJob(cq *tgbotapi.CallbackQuery) dispatch.Job {
	return dispatch.Job{Run: func(ctx context.Context) { b.tg.AnswerCallback(ctx, cq.ID, "This button is no longer valid.", true) }}
}

// messageJob routes message m, update id, written at place at.
func (b *Bot) messageJob(id int64, m *tgbotapi.Message, at telegram.Place) dispatch.Job {
	lane := at.String()
	switch {
	case m.IsCommand():
		return b.commandJob(lane, m, at)
	case m.MediaGroupID != "":
		return b.laneJob(lane, b.onMessage(m, at, func(ctx context.Context, m *message) { b.handleAlbum(ctx, id, m) }))
	case m.From != nil && b.waiting(at, m.From.ID):
		// A call of the running turn waits for this user's form: the
		// lane waits for the turn, the reply must not.
		return dispatch.Job{Run: b.onMessage(m, at, b.handleFormText)}
	}
	return b.laneJob(lane, b.onMessage(m, at, b.handleMessage))
}

// pressJob routes a press of a button with data on a message at place
// at.
func (b *Bot) pressJob(cq *tgbotapi.CallbackQuery, data callback.Data, at telegram.Place) dispatch.Job {
	lane := at.String()
	switch data.Kind {
	case callback.Servers:
		return dispatch.Job{Run: func(ctx context.Context) { b.handleServerPress(ctx, cq, at, data) }}
	case callback.Disconnect:
		// Revoking may take the authorization server's while: out of band.
		return dispatch.Job{Run: func(ctx context.Context) {
			if b.admitPress(ctx, cq) {
				b.conns.Press(ctx, cq, data, b.isAdmin(cq.From.ID))
			}
		}}
	case callback.Chat:
		return b.settingsJob(lane, cq, at, func(ctx context.Context, q *query, admin bool) {
			b.settings.PressTools(ctx, q.CallbackQuery, data, admin)
			// The chat's prompts follow its servers.
			b.menus.Chat(ctx, q.at.Chat)
		})
	case callback.Link:
		// Reading may take the server's while: no lane waits for it.
		return dispatch.Job{Run: b.onQuery(cq, at, func(ctx context.Context, q *query) { b.links.Press(ctx, q.CallbackQuery, q.at, q.key, data) })}
	case callback.Stop:
		// Out of band: the lane is the turn's to stop.
		return dispatch.Job{Run: func(ctx context.Context) { b.handleStopPress(ctx, cq, at, data) }}
	case callback.AppVerdict:
		if b.apps == nil {
			return b.invalidJob(cq)
		}
		// Out of band: an app's request waits for it, not a turn.
		return dispatch.Job{Run: func(ctx context.Context) { b.apps.Press(ctx, cq, data) }}
	case callback.TaskStop:
		// Out of band: no turn runs the task.
		return dispatch.Job{Run: func(ctx context.Context) { b.tasks.Stop(ctx, cq, at, data) }}
	case callback.Form:
		// The lane waits for the turn whose call waits for the form.
		return dispatch.Job{Run: b.onQuery(cq, at, func(ctx context.Context, q *query) { b.handleFormPress(ctx, q, data) })}
	case callback.PromptForm:
		// No call waits for it: it ends in a turn, in the chat's order.
		return dispatch.Job{Lane: lane, Run: b.onQuery(cq, at, func(ctx context.Context, q *query) { b.handlePromptPress(ctx, q, data) })}
	case callback.Model:
		return b.settingsJob(lane, cq, at, func(ctx context.Context, q *query, admin bool) {
			b.settings.PressModel(ctx, q.CallbackQuery, q.key, data, admin)
		})
	}
	return b.laneJob(lane, b.onQuery(cq, at, func(ctx context.Context, q *query) { b.handlePress(ctx, q, data) }))
}

// settingsJob hands a press on a chat's settings (/tools, /model) to
// package settings once the presser is admitted (the settings check the
// right to change the chat): beside the chat's turn, as the screens it
// answers.
func (b *Bot) settingsJob(lane string, cq *tgbotapi.CallbackQuery, at telegram.Place, press func(context.Context, *query, bool)) dispatch.Job {
	return b.besideJob(lane, b.onQuery(cq, at, func(ctx context.Context, q *query) {
		if b.admitPress(ctx, cq) {
			press(ctx, q, b.isAdmin(cq.From.ID))
		}
	}))
}

// commandJob routes a command (see package commands): one for another bot
// is not for this one; an unknown one is answered beside the turn, and
// in a group only when addressed to this bot by name, since a group's
// other bots have commands of their own.
func (b *Bot) commandJob(lane string, m *tgbotapi.Message, at telegram.Place) dispatch.Job {
	c, ok, mine := commandTable().Of(m, b.self.UserName)
	_, _, named := strings.Cut(m.CommandWithAt(), "@")
	switch {
	case mine && !ok && b.prompts.IsPrompt(m.Command()):
		// A server's prompt may run a turn: in the chat's lane.
		return b.laneJob(lane, b.onMessage(m, at, b.handleMessage))
	case !mine && !m.Chat.IsPrivate(), !ok && !m.Chat.IsPrivate() && !named:
		return dispatch.Job{}
	case !ok:
		return b.besideJob(lane, b.onMessage(m, at, b.handleMessage))
	case c.Order == commands.OutOfBand:
		// It stops what runs at its place (/cancel), and needs no
		// conversation: no read of the database it must work without.
		return dispatch.Job{Run: func(ctx context.Context) { c.Run(b, ctx, &message{Message: m, at: at}) }}
	case c.Order == commands.Beside:
		return b.besideJob(lane, b.onMessage(m, at, b.handleMessage))
	}
	return b.laneJob(lane, b.onMessage(m, at, b.handleMessage))
}

// besideJob runs run at once, beside the chat's running turn, after the
// chat's earlier beside jobs; the chat's jobs routed after it wait for
// it (laneJob). route runs on the dispatcher, in inbox order, so the
// order of the chat's updates decides.
func (b *Bot) besideJob(chat string, run func(ctx context.Context)) dispatch.Job {
	done := make(chan struct{})
	b.mu.Lock()
	prev := b.beside[chat]
	b.beside[chat] = done
	b.mu.Unlock()
	return dispatch.Job{Run: func(ctx context.Context) {
		defer func() {
			close(done)
			b.mu.Lock()
			if b.beside[chat] == done {
				delete(b.beside, chat)
			}
			b.mu.Unlock()
		}()
		if after(ctx, prev) {
			run(ctx)
		}
	}}
}

// laneJob runs run in the chat's lane, once the beside jobs routed
// before it ended.
func (b *Bot) laneJob(chat string, run func(ctx context.Context)) dispatch.Job {
	b.mu.Lock()
	prev := b.beside[chat]
	b.mu.Unlock()
	return dispatch.Job{Lane: chat, Run: func(ctx context.Context) {
		select {
		case <-prev: // nil blocks: no command ahead, or none waiting
		default:
			if prev != nil {
				b.behind.Add(1)
				defer b.behind.Add(-1)
			}
		}
		if after(ctx, prev) {
			run(ctx)
		}
	}}
}

// after waits for done (nil: nothing to wait for), and reports false if
// ctx ended first: the job is cut short, and runs again after a restart.
func after(ctx context.Context, done <-chan struct{}) bool {
	if done == nil {
		return true
	}
	select {
	case <-done:
		return true
	case <-ctx.Done():
		return false
	}
}

// caller is user in the conversation of key.
func caller(user int64, key string) mcpgram.Caller {
	return mcpgram.Caller{UserID: strconv.FormatInt(user, 10), ChatID: key}
}

// addressed reports whether a group message is for the bot.
func (b *Bot) addressed(m *tgbotapi.Message) bool { return telegram.Addressed(m, b.self) }

func (b *Bot) say(ctx context.Context, to telegram.Place, html string) {
	if _, err := b.tg.SendLong(ctx, to, 0, html, nil); err != nil {
		b.logger.Error("send message", "chat", to, "err", err)
	}
}

// admit decides whether a message is for the bot to answer: not from a
// bot, addressed to it in a group, from an allowed user within the rate
// limit. The user is told what is due.
func (b *Bot) admit(ctx context.Context, m *message, addressed bool) bool {
	if m.From == nil || m.From.IsBot {
		return false
	}
	user, chatID := m.From.ID, m.Chat.ID
	private := m.Chat.IsPrivate()
	if !private && !addressed {
		return false
	}
	if !b.isAllowed(user) {
		if !b.strangers.Due(user) {
			b.logger.Debug("message from a user not in ALLOWED_USER_IDS; ignored", "user", user, "chat", chatID)
			return false
		}
		b.logger.Info("message from a user not in ALLOWED_USER_IDS", "user", user, "chat", chatID)
		if private {
			// The id is what the operator needs to let them in.
			b.say(ctx, m.at, fmt.Sprintf("Sorry, this bot is private. Your Telegram user id is %d: the bot's operator can let you in with it.", user))
		}
		return false
	}
	if ok, warn := b.allow(ctx, user); !ok {
		if warn {
			b.say(ctx, m.at, fmt.Sprintf("You are sending messages faster than I can keep up with (at most %d a minute). Please wait a moment and try again.", b.cfg.RateLimitPerMinute))
		}
		return false
	}
	return true
}

func (b *Bot) handleMessage(ctx context.Context, m *message) {
	if !b.admit(ctx, m, b.addressed(m.Message)) {
		return
	}
	// A reply to a form that closed between the routing and now, or to
	// the form of a prompt's arguments.
	if b.formText(ctx, m) || b.prompts.Text(ctx, m.at, m.key, m.Message) || b.signIns.Stray(ctx, m.at, m.Message) {
		return
	}
	b.handleAdmitted(ctx, m)
}

// handleAdmitted handles a message admit let through: a command, or the
// text of a turn.
func (b *Bot) handleAdmitted(ctx context.Context, m *message) {
	if m.IsCommand() {
		b.runCommand(ctx, m)
		return
	}
	text, images, ok := b.intake.Message(ctx, m.Message, m.at)
	if !ok {
		return
	}
	b.converse(ctx, m, text, images)
}

// converse runs the turn of message m, whose text (and images) the model
// gets.
func (b *Bot) converse(ctx context.Context, m *message, text string, images []llm.Image) error {
	user := m.From.ID
	// A typed message answers an open question or denies an open
	// approval (the agent decides); either way its buttons are done.
	b.cards.CloseOpenFor(ctx, m.key, user)
	// In groups the reply quotes the message, as several people may talk.
	replyTo := 0
	if !m.Chat.IsPrivate() {
		replyTo = m.MessageID
	}
	// A task's answer, which comes later, after other messages maybe,
	// quotes it in any chat.
	return b.runTurn(ctx, m.at, m.key, user, replyTo, agent.Request{Caller: caller(user, m.key), Text: b.apps.WithContext(ctx, m.key, text), Images: images, Exempt: b.isAdmin(user), ReplyTo: int64(m.MessageID)}, nil)
}

// handleCancel answers /cancel: it stops the turn running in the place
// it was sent in (a chat, or one of its topics).
func (b *Bot) handleCancel(ctx context.Context, m *message) {
	if m.From == nil || !b.isAllowed(m.From.ID) {
		return
	}
	if !m.Chat.IsPrivate() && !b.addressed(m.Message) {
		return
	}
	user := m.From.ID
	b.mu.Lock()
	var cancel context.CancelCauseFunc
	var owner int64
	if t := b.turns[m.at.String()]; t != nil {
		cancel, owner = t.cancel, t.owner
	}
	b.mu.Unlock()
	// The answers count against the rate limit; a refused one is dropped
	// (they are courtesies, and /cancel itself must keep working).
	switch {
	case cancel == nil:
		if ok, _ := b.allow(ctx, user); ok {
			b.say(ctx, m.at, "Nothing is running.")
		}
	case owner != user && !b.isAdmin(user):
		// In a group, one member must not stop another's request.
		if ok, _ := b.allow(ctx, user); ok {
			b.say(ctx, m.at, "Only the person who asked, or an admin, can stop this request.")
		}
	default:
		// The agent ends the turn with its own "Stopped." message.
		cancel(agent.ErrStopped)
	}
}

// handleAlbum answers the album of m, update id, as one turn (see package
// album), unless it was already answered with an earlier item.
func (b *Bot) handleAlbum(ctx context.Context, id int64, m *message) {
	album, ids, ok := b.albums.Gather(ctx, id, m.Message)
	if !ok {
		return
	}
	b.logger.Debug("album gathered", "chat", m.at, "items", len(album))
	first := &message{Message: album[0], at: m.at, key: m.key}
	if b.admit(ctx, first, slices.ContainsFunc(album, b.addressed)) {
		if text, images, ok := b.intake.Album(ctx, album, m.at); ok {
			if err := b.converse(ctx, first, text, images); errors.Is(err, store.ErrUnavailable) {
				return // to run again: the whole album does
			}
		}
	}
	if ctx.Err() != nil {
		return // cut short: the whole album runs again
	}
	if err := b.queue.Absorb(ctx, ids...); err != nil {
		b.logger.Error("mark an album's updates done; they run again after a restart", "chat", m.at, "err", err)
	}
}

// runTurn runs one agent turn in the conversation key, answered at place
// at, with the chat's reply machinery; ctx is the job's. onFirst runs
// before the first event. A topic closed or deleted under the turn ends
// it (see reply.gone).
func (b *Bot) runTurn(ctx context.Context, at telegram.Place, key string, user int64, replyTo int, req agent.Request, onFirst func()) error {
	// The bot's lines of the turn carry the agent's turn id too, and its
	// Stop button.
	if req.TurnID == "" {
		req.TurnID = turnID(ctx)
	}
	if req.ReplyTo == 0 {
		req.ReplyTo = int64(replyTo) // a task's result answers it too
	}
	turnCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	lane := at.String()
	b.mu.Lock()
	b.turns[lane] = &turn{id: req.TurnID, cancel: cancel, owner: user}
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		delete(b.turns, lane)
		b.mu.Unlock()
	}()

	r := b.replies.New(reply.Spec{Base: ctx, Ctx: turnCtx, Cancel: cancel, At: at, Key: key, User: user, ReplyTo: replyTo, Typing: true, OnFirst: onFirst, Stop: req.TurnID})
	err := b.agent.Turn(turnCtx, req, r.Emit)
	r.Finish()
	switch {
	case errors.Is(err, store.ErrUnavailable) && ctx.Err() == nil:
		b.later(ctx, r, at, req.TurnID, err)
		return err
	case errors.Is(context.Cause(turnCtx), reply.ErrTopicGone) && ctx.Err() == nil:
		b.logger.Warn("the topic was closed or deleted: its turn ended", "chat", at, "turn", req.TurnID, "err", err)
		return err
	}
	if err != nil && !errors.Is(err, agent.ErrNotYours) && !errors.Is(err, agent.ErrStale) && !errors.Is(err, agent.ErrOverBudget) && !errors.Is(err, agent.ErrStopped) && ctx.Err() == nil {
		b.logger.Error("turn failed", "chat", at, "turn", req.TurnID, "err", err)
		if !r.Ended() && turnCtx.Err() == nil {
			b.say(ctx, at, "Sorry, something went wrong on my side. Please try again.")
		}
	}
	return err
}

// queueTurn runs req's turn as a job of the queue, not of a lane: the
// turn that answers an app's message, which came from its page, not
// through the inbox (see apps.Chats).
func (b *Bot) queueTurn(at telegram.Place, key string, user int64, replyTo int, req agent.Request) {
	b.queue.Go(func(work context.Context) {
		if err := b.runTurn(work, at, key, user, replyTo, req, nil); err != nil && work.Err() == nil {
			b.logger.Warn("the turn of an app's message", "chat", at, "err", err)
		}
	})
}

// turnID is the id of a turn the job running with ctx starts, drawn from
// its update's: an update run again, because the bot stopped before it
// was marked done, is then the same turn to the agent, which carries it
// on from what it stored instead of running it a second time (see
// agent.Request.TurnID). Outside a job, a new one.
func turnID(ctx context.Context) string {
	if id := dispatch.ItemID(ctx); id != 0 {
		return fmt.Sprintf("%016x", uint64(id))
	}
	return agent.NewTurnID()
}

// msgLater tells a user whose request waits for the database.
const msgLater = "⏳ I cannot reach my database right now, so I will answer this as soon as it is back."

// later leaves the update of a turn that could not reach the database in
// the inbox, to run again once the database answers (see
// dispatch.RunAgain), and tells the user so the first time; a draft of
// the turn's reply goes.
func (b *Bot) later(ctx context.Context, r *reply.Reply, at telegram.Place, turnID string, err error) {
	dispatch.RunAgain(ctx)
	r.Abandon()
	attempt := dispatch.Attempt(ctx)
	b.logger.Warn("the database is unavailable; the update runs again once it is back", "chat", at, "turn", turnID, "attempt", attempt, "err", err)
	if attempt == 1 {
		b.say(ctx, at, msgLater)
	}
}
