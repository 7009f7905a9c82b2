package bot

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/bot/callback"
	"github.com/mcpgram/mcpgram/bot/media"
	"github.com/mcpgram/mcpgram/bot/render"
	"github.com/mcpgram/mcpgram/bot/telegram"
	"github.com/mcpgram/mcpgram/bot/updates"
	"github.com/mcpgram/mcpgram/dispatch"
	"github.com/mcpgram/mcpgram/hub"
	"github.com/mcpgram/mcpgram/llm"
	"github.com/mcpgram/mcpgram/store"
)

// route turns an inbox item into a job for the dispatch queue. Messages
// and presses run in their chat's lane, in order; what must not wait
// behind a running turn (/cancel, /servers buttons, buttons that cannot
// be valid) runs out of band.
func (b *Bot) route(it store.InboxItem) dispatch.Job {
	u, err := updates.Decode(it.Payload)
	if err != nil {
		b.logger.Error("undecodable update in inbox; dropping it", "update_id", it.UpdateID, "err", err)
		return dispatch.Job{}
	}
	switch {
	case u.Message != nil && u.Message.Chat != nil:
		m := u.Message
		if m.IsCommand() {
			return b.commandJob(it.ChatID, m)
		}
		if m.MediaGroupID != "" {
			return b.laneJob(it.ChatID, func(ctx context.Context) { b.handleAlbum(ctx, it.UpdateID, m) })
		}
		if m.From != nil && !m.IsCommand() && b.agent.Waiting(it.ChatID, strconv.FormatInt(m.From.ID, 10)) {
			// A call of the running turn waits for this user's form: the
			// lane waits for the turn, the reply must not.
			return dispatch.Job{Run: func(ctx context.Context) { b.handleFormText(ctx, m) }}
		}
		return b.laneJob(it.ChatID, func(ctx context.Context) { b.handleMessage(ctx, m) })
	case u.CallbackQuery != nil:
		cq := u.CallbackQuery
		data, err := callback.Decode(cq.Data)
		switch {
		case err != nil || cq.From == nil || cq.Message == nil || cq.Message.Chat == nil:
			return dispatch.Job{Run: func(ctx context.Context) { b.tg.AnswerCallback(ctx, cq.ID, "This button is no longer valid.", true) }}
		case data.Kind == callback.Servers:
			return dispatch.Job{Run: func(ctx context.Context) { b.handleServerPress(ctx, cq, data) }}
		case data.Kind == callback.Disconnect:
			// Revoking may take the authorization server's while: out of band.
			return dispatch.Job{Run: func(ctx context.Context) { b.handleDisconnectPress(ctx, cq, data) }}
		case data.Kind == callback.Chat:
			return b.settingsJob(it.ChatID, cq, data, func(ctx context.Context, cq *tgbotapi.CallbackQuery, data callback.Data, admin bool) {
				b.settings.PressTools(ctx, cq, data, admin)
				// The chat's prompts follow its servers.
				b.chatMenu(ctx, cq.Message.Chat.ID)
			})
		case data.Kind == callback.Link:
			// Reading may take the server's while: no lane waits for it.
			return dispatch.Job{Run: func(ctx context.Context) { b.handleLinkPress(ctx, cq, data) }}
		case data.Kind == callback.Stop:
			// Out of band: the lane is the turn's to stop.
			return dispatch.Job{Run: func(ctx context.Context) { b.handleStopPress(ctx, cq, data) }}
		case data.Kind == callback.Form:
			// The lane waits for the turn whose call waits for the form.
			return dispatch.Job{Run: func(ctx context.Context) { b.handleFormPress(ctx, cq, data) }}
		case data.Kind == callback.PromptForm:
			// No call waits for it: it ends in a turn, in the chat's order.
			return dispatch.Job{Lane: it.ChatID, Run: func(ctx context.Context) { b.handlePromptPress(ctx, cq, data) }}
		case data.Kind == callback.Model:
			return b.settingsJob(it.ChatID, cq, data, b.settings.PressModel)
		}
		return b.laneJob(it.ChatID, func(ctx context.Context) { b.handlePress(ctx, cq, data) })
	}
	// Edits, channel posts, member changes: nothing to answer.
	return dispatch.Job{}
}

// settingsJob hands a press on a chat's settings (/tools, /model) to
// package settings once the presser is admitted (the settings check the
// right to change the chat): beside the chat's turn, as the screens it
// answers.
func (b *Bot) settingsJob(chat string, cq *tgbotapi.CallbackQuery, data callback.Data,
	press func(context.Context, *tgbotapi.CallbackQuery, callback.Data, bool)) dispatch.Job {
	return b.besideJob(chat, func(ctx context.Context) {
		if b.admitPress(ctx, cq) {
			press(ctx, cq, data, b.isAdmin(cq.From.ID))
		}
	})
}

// commandJob routes a command (see commands.go): one for another bot
// is not for this one; an unknown one is answered beside the turn, and
// in a group only when addressed to this bot by name, since a group's
// other bots have commands of their own.
func (b *Bot) commandJob(chat string, m *tgbotapi.Message) dispatch.Job {
	c, ok, mine := b.commandOf(m)
	_, _, named := strings.Cut(m.CommandWithAt(), "@")
	switch {
	case mine && !ok && b.isPrompt(m.Command()):
		// A server's prompt may run a turn: in the chat's lane.
		return b.laneJob(chat, func(ctx context.Context) { b.handleMessage(ctx, m) })
	case !mine && !m.Chat.IsPrivate(), !ok && !m.Chat.IsPrivate() && !named:
		return dispatch.Job{}
	case !ok:
		return b.besideJob(chat, func(ctx context.Context) { b.handleMessage(ctx, m) })
	case c.order == outOfBand:
		return dispatch.Job{Run: func(ctx context.Context) { c.run(b, ctx, m) }}
	case c.order == beside:
		return b.besideJob(chat, func(ctx context.Context) { b.handleMessage(ctx, m) })
	}
	return b.laneJob(chat, func(ctx context.Context) { b.handleMessage(ctx, m) })
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

func caller(user, chatID int64) hub.Caller {
	return hub.Caller{UserID: strconv.FormatInt(user, 10), ChatID: strconv.FormatInt(chatID, 10)}
}

// addressed reports whether a group message is for the bot.
func (b *Bot) addressed(m *tgbotapi.Message) bool { return telegram.Addressed(m, b.self) }

func (b *Bot) say(ctx context.Context, chatID int64, html string) {
	if _, err := b.tg.SendLong(ctx, chatID, 0, html, nil); err != nil {
		b.logger.Error("send message", "chat", chatID, "err", err)
	}
}

// admit decides whether a message is for the bot to answer: not from a
// bot, addressed to it in a group, from an allowed user within the rate
// limit. The user is told what is due.
func (b *Bot) admit(ctx context.Context, m *tgbotapi.Message, addressed bool) bool {
	if m.From == nil || m.From.IsBot {
		return false
	}
	user, chatID := m.From.ID, m.Chat.ID
	private := m.Chat.IsPrivate()
	if !private && !addressed {
		return false
	}
	if !b.isAllowed(user) {
		if !b.refuse(user) {
			b.logger.Debug("message from a user not in ALLOWED_USER_IDS; ignored", "user", user, "chat", chatID)
			return false
		}
		b.logger.Info("message from a user not in ALLOWED_USER_IDS", "user", user, "chat", chatID)
		if private {
			// The id is what the operator needs to let them in.
			b.say(ctx, chatID, fmt.Sprintf("Sorry, this bot is private. Your Telegram user id is %d: the bot's operator can let you in with it.", user))
		}
		return false
	}
	if ok, warn := b.allow(ctx, user); !ok {
		if warn {
			b.say(ctx, chatID, fmt.Sprintf("You are sending messages faster than I can keep up with (at most %d a minute). Please wait a moment and try again.", b.cfg.RateLimitPerMinute))
		}
		return false
	}
	return true
}

func (b *Bot) handleMessage(ctx context.Context, m *tgbotapi.Message) {
	if !b.admit(ctx, m, b.addressed(m)) {
		return
	}
	// A reply to a form that closed between the routing and now, or to
	// the form of a prompt's arguments.
	if b.formText(ctx, m) || b.promptText(ctx, m) || b.straySignIn(ctx, m) {
		return
	}
	b.handleAdmitted(ctx, m)
}

// handleAdmitted handles a message admit let through: a command, or the
// text of a turn.
func (b *Bot) handleAdmitted(ctx context.Context, m *tgbotapi.Message) {
	if m.IsCommand() {
		b.runCommand(ctx, m)
		return
	}
	text, images, ok := b.messageText(ctx, m)
	if !ok {
		return
	}
	b.converse(ctx, m, text, images)
}

// converse runs the turn of message m, whose text (and images) the model
// gets.
func (b *Bot) converse(ctx context.Context, m *tgbotapi.Message, text string, images []llm.Image) error {
	user, chatID := m.From.ID, m.Chat.ID
	// A typed message answers an open question or denies an open
	// approval (the agent decides); either way its buttons are done.
	b.closeOpenCardFor(ctx, chatID, user)
	// In groups the reply quotes the message, as several people may talk.
	replyTo := 0
	if !m.Chat.IsPrivate() {
		replyTo = m.MessageID
	}
	return b.runTurn(ctx, chatID, user, replyTo, agent.Request{Caller: caller(user, chatID), Text: text, Images: images, Exempt: b.isAdmin(user)}, nil)
}

func (b *Bot) handleCancel(ctx context.Context, m *tgbotapi.Message) {
	if m.From == nil || !b.isAllowed(m.From.ID) {
		return
	}
	if !m.Chat.IsPrivate() && !b.addressed(m) {
		return
	}
	user := m.From.ID
	b.mu.Lock()
	var cancel context.CancelCauseFunc
	var owner int64
	if t := b.turns[m.Chat.ID]; t != nil {
		cancel, owner = t.cancel, t.owner
	}
	b.mu.Unlock()
	// The answers count against the rate limit; a refused one is dropped
	// (they are courtesies, and /cancel itself must keep working).
	switch {
	case cancel == nil:
		if ok, _ := b.allow(ctx, user); ok {
			b.say(ctx, m.Chat.ID, "Nothing is running.")
		}
	case owner != user && !b.isAdmin(user):
		// In a group, one member must not stop another's request.
		if ok, _ := b.allow(ctx, user); ok {
			b.say(ctx, m.Chat.ID, "Only the person who asked, or an admin, can stop this request.")
		}
	default:
		// The agent ends the turn with its own "Stopped." message.
		cancel(agent.ErrStopped)
	}
}

// messageText is what the model gets of a message: its text, or what it
// carries (a recording's transcript, a text file, an image) with its
// caption. ok is false when there is nothing to send, the user having been
// told why.
func (b *Bot) messageText(ctx context.Context, m *tgbotapi.Message) (string, []llm.Image, bool) {
	if m.Text == "" {
		if res, carried := b.media.Read(ctx, m); carried {
			return b.readText(ctx, m, res)
		}
		return b.readText(ctx, m, media.Result{Text: m.Caption})
	}
	return b.readText(ctx, m, media.Result{Text: m.Text})
}

// readText is what the model gets of what was read of m (or of the album
// m starts), telling the user what is due: why it cannot be read, a
// notice, what was heard.
func (b *Bot) readText(ctx context.Context, m *tgbotapi.Message, res media.Result) (string, []llm.Image, bool) {
	private := m.Chat.IsPrivate()
	if res.Problem != "" {
		b.say(ctx, m.Chat.ID, render.Escape(res.Problem))
		return "", nil, false
	}
	if res.Notice != "" {
		b.say(ctx, m.Chat.ID, render.Escape(res.Notice))
	}
	if res.Heard != "" {
		// One message, whatever was heard: its beginning, if it is long.
		shown := "🎤 <i>I heard:</i>\n<blockquote expandable>" + render.Escape(render.Shorten(res.Heard, maxHeardShown)) + "</blockquote>"
		if _, err := b.tg.SendLong(ctx, m.Chat.ID, m.MessageID, shown, nil); err != nil {
			b.logger.Error("send the transcript", "chat", m.Chat.ID, "err", err)
		}
	}
	text := res.Text
	if !private {
		text = telegram.StripMention(text, b.self.UserName)
	}
	if strings.TrimSpace(text) == "" {
		if private || m.Text != "" {
			b.say(ctx, m.Chat.ID, "I can read text, voice messages, photos, images, text files and PDFs; not stickers or this kind of message.")
		}
		return "", nil, false
	}
	return text, res.Images, true
}

// maxHeardShown is how many characters of a transcript the user sees:
// one message's worth.
const maxHeardShown = 3500

// handleAlbum answers the album of m, update id, as one turn (see package
// album), unless it was already answered with an earlier item.
func (b *Bot) handleAlbum(ctx context.Context, id int64, m *tgbotapi.Message) {
	album, ids, ok := b.albums.Gather(ctx, id, m)
	if !ok {
		return
	}
	b.logger.Debug("album gathered", "chat", m.Chat.ID, "items", len(album))
	first := album[0]
	if b.admit(ctx, first, slices.ContainsFunc(album, b.addressed)) {
		if text, images, ok := b.readText(ctx, first, b.media.ReadAlbum(ctx, album)); ok {
			if err := b.converse(ctx, first, text, images); errors.Is(err, store.ErrUnavailable) {
				return // to run again: the whole album does
			}
		}
	}
	if ctx.Err() != nil {
		return // cut short: the whole album runs again
	}
	if err := b.queue.Absorb(ctx, ids...); err != nil {
		b.logger.Error("mark an album's updates done; they run again after a restart", "chat", m.Chat.ID, "err", err)
	}
}

// runTurn runs one agent turn with the chat's reply machinery; ctx is
// the job's. onFirst runs before the first event.
func (b *Bot) runTurn(ctx context.Context, chatID, user int64, replyTo int, req agent.Request, onFirst func()) error {
	// The bot's lines of the turn carry the agent's turn id too, and its
	// Stop button.
	if req.TurnID == "" {
		req.TurnID = agent.NewTurnID()
	}
	turnCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	b.mu.Lock()
	b.turns[chatID] = &turn{id: req.TurnID, cancel: cancel, owner: user}
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		delete(b.turns, chatID)
		b.mu.Unlock()
	}()

	r := b.newStoppableReply(ctx, turnCtx, chatID, user, replyTo, true, onFirst, req.TurnID)
	err := b.agent.Turn(turnCtx, req, r.emit)
	r.finish()
	if errors.Is(err, store.ErrUnavailable) && ctx.Err() == nil {
		b.later(ctx, r, chatID, req.TurnID, err)
		return err
	}
	if err != nil && !errors.Is(err, agent.ErrNotYours) && !errors.Is(err, agent.ErrStale) && !errors.Is(err, agent.ErrOverBudget) && !errors.Is(err, agent.ErrStopped) && ctx.Err() == nil {
		b.logger.Error("turn failed", "chat", chatID, "turn", req.TurnID, "err", err)
		if !r.ended() && turnCtx.Err() == nil {
			b.say(ctx, chatID, "Sorry, something went wrong on my side. Please try again.")
		}
	}
	return err
}

// msgLater tells a user whose request waits for the database.
const msgLater = "⏳ I cannot reach my database right now, so I will answer this as soon as it is back."

// later leaves the update of a turn that could not reach the database in
// the inbox, to run again once the database answers (see
// dispatch.RunAgain), and tells the user so the first time; a draft of
// the turn's reply goes.
func (b *Bot) later(ctx context.Context, r *reply, chatID int64, turnID string, err error) {
	dispatch.RunAgain(ctx)
	r.abandon()
	attempt := dispatch.Attempt(ctx)
	b.logger.Warn("the database is unavailable; the update runs again once it is back", "chat", chatID, "turn", turnID, "attempt", attempt, "err", err)
	if attempt == 1 {
		b.say(ctx, chatID, msgLater)
	}
}

// startText greets user, with what the bot can do and the user's id,
// which its operator lists in ALLOWED_USER_IDS and ADMIN_USER_IDS.
func (b *Bot) startText(user int64) string {
	cat := b.hub.Catalog()
	var sb strings.Builder
	sb.WriteString("👋 <b>Hi! I am an assistant that acts through tools.</b>\nAsk me anything; I call tools when they help.\n\n")
	running := cat.Running()
	if len(running) == 0 {
		sb.WriteString("No tool servers are connected right now.")
	} else {
		sb.WriteString("Connected:\n")
		for _, s := range running {
			fmt.Fprintf(&sb, "• <b>%s</b> (%s)\n", render.Escape(s.Name), render.Count(len(s.Tools), "tool"))
		}
	}
	sb.WriteString("\n/help lists the commands.")
	fmt.Fprintf(&sb, "\n\nYour Telegram user id is <code>%d</code> (what the bot's operator lists in ALLOWED_USER_IDS and ADMIN_USER_IDS).", user)
	return sb.String()
}
