package bot

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/bot/render"
	"github.com/mcpgram/mcpgram/hub"
)

// A chat is the ordered queue of one Telegram chat. Its worker goroutine
// lives while the queue has work.
type chat struct {
	id      int64
	queue   []job
	running bool
	cancel  context.CancelFunc // of the running turn, for /cancel
	owner   int64              // the user whose turn is running
}

type job struct {
	updateID int64
	u        tgbotapi.Update
}

// route sends an update to its chat's worker, or handles it out of band
// when it must not wait behind a running turn (/cancel, /servers buttons).
func (b *Bot) route(id int64, u tgbotapi.Update) {
	switch {
	case u.Message != nil && u.Message.Chat != nil:
		if u.Message.IsCommand() && strings.EqualFold(u.Message.Command(), "cancel") {
			b.outOfBand(id, func() { b.handleCancel(u.Message) })
			return
		}
		b.enqueue(u.Message.Chat.ID, job{id, u})
	case u.CallbackQuery != nil:
		cq := u.CallbackQuery
		if strings.HasPrefix(cq.Data, "s:") || cq.From == nil || cq.Message == nil || cq.Message.Chat == nil {
			b.outOfBand(id, func() { b.handleServerPress(cq) })
			return
		}
		b.enqueue(cq.Message.Chat.ID, job{id, u})
	default:
		// Edits, channel posts, member changes: nothing to answer.
		b.markDone(id)
	}
}

func (b *Bot) outOfBand(id int64, fn func()) {
	b.work.Add(1)
	go func() {
		defer b.work.Done()
		fn()
		b.markDone(id)
	}()
}

func (b *Bot) enqueue(chatID int64, j job) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.chats[chatID]
	if c == nil {
		c = &chat{id: chatID}
		b.chats[chatID] = c
	}
	c.queue = append(c.queue, j)
	if !c.running {
		c.running = true
		b.work.Add(1)
		go b.runChat(c)
	}
}

func (b *Bot) runChat(c *chat) {
	defer b.work.Done()
	for {
		b.mu.Lock()
		if len(c.queue) == 0 || b.stopping {
			// While stopping, queued updates stay unprocessed in the inbox
			// for the next run.
			c.running = false
			if len(c.queue) == 0 {
				delete(b.chats, c.id)
			}
			b.mu.Unlock()
			return
		}
		j := c.queue[0]
		c.queue = c.queue[1:]
		b.mu.Unlock()

		b.handle(c, j.u)
		if b.baseCtx.Err() != nil {
			// Cut short by shutdown: handle it again after the restart.
			return
		}
		b.markDone(j.updateID)
	}
}

func (b *Bot) handle(c *chat, u tgbotapi.Update) {
	defer func() {
		if p := recover(); p != nil {
			b.logger.Error("panic while handling an update", "chat", c.id, "panic", p)
		}
	}()
	switch {
	case u.Message != nil:
		b.handleMessage(c, u.Message)
	case u.CallbackQuery != nil:
		b.handlePress(c, u.CallbackQuery)
	}
}

func caller(user, chatID int64) hub.Caller {
	return hub.Caller{UserID: strconv.FormatInt(user, 10), ChatID: strconv.FormatInt(chatID, 10)}
}

// addressed reports whether a group message is for the bot: a command
// without a bot name or with ours, a mention, or a reply to one of ours.
func (b *Bot) addressed(m *tgbotapi.Message) bool {
	if m.IsCommand() {
		_, at, found := strings.Cut(m.CommandWithAt(), "@")
		return !found || strings.EqualFold(at, b.self.UserName)
	}
	if m.ReplyToMessage != nil && m.ReplyToMessage.From != nil && m.ReplyToMessage.From.ID == b.self.ID {
		return true
	}
	for _, e := range m.Entities {
		switch e.Type {
		case "mention":
			if strings.EqualFold(utf16Slice(m.Text, e.Offset, e.Length), "@"+b.self.UserName) {
				return true
			}
		case "text_mention":
			if e.User != nil && e.User.ID == b.self.ID {
				return true
			}
		}
	}
	return false
}

// utf16Slice cuts s by Telegram's UTF-16 offsets.
func utf16Slice(s string, off, n int) string {
	pos, start := 0, -1
	for i, r := range s {
		if pos == off {
			start = i
		}
		if start >= 0 && pos == off+n {
			return s[start:i]
		}
		if r >= 0x10000 {
			pos += 2
		} else {
			pos++
		}
	}
	if start >= 0 && pos == off+n {
		return s[start:]
	}
	return ""
}

func (b *Bot) stripMention(text string) string {
	if b.self.UserName == "" {
		return text
	}
	at := "@" + strings.ToLower(b.self.UserName)
	for {
		i := strings.Index(strings.ToLower(text), at)
		if i < 0 {
			break
		}
		left, right := strings.TrimRight(text[:i], " "), strings.TrimLeft(text[i+len(at):], " ")
		if left != "" && right != "" {
			left += " "
		}
		text = left + right
	}
	return strings.TrimSpace(text)
}

func (b *Bot) say(chatID int64, html string) {
	if _, err := b.sendLong(b.baseCtx, chatID, 0, html, nil); err != nil {
		b.logger.Error("send message", "chat", chatID, "err", err)
	}
}

func (b *Bot) handleMessage(c *chat, m *tgbotapi.Message) {
	if m.From == nil || m.From.IsBot {
		return
	}
	user, chatID := m.From.ID, m.Chat.ID
	private := m.Chat.IsPrivate()
	if !private && !b.addressed(m) {
		return
	}
	if !b.isAllowed(user) {
		if !b.refuse(user) {
			b.logger.Debug("message from a user not in ALLOWED_USER_IDS; ignored", "user", user, "chat", chatID)
			return
		}
		b.logger.Info("message from a user not in ALLOWED_USER_IDS", "user", user, "chat", chatID)
		if private {
			b.say(chatID, "Sorry, this bot is private.")
		}
		return
	}
	if ok, warn := b.allow(user); !ok {
		if warn {
			b.say(chatID, fmt.Sprintf("You are sending messages faster than I can keep up with (at most %d a minute). Please wait a moment and try again.", b.cfg.RateLimitPerMinute))
		}
		return
	}
	if m.IsCommand() {
		switch strings.ToLower(m.Command()) {
		case "start":
			b.say(chatID, b.startText())
			return
		case "help":
			b.say(chatID, helpText)
			return
		case "reset":
			if err := b.agent.Reset(b.baseCtx, strconv.FormatInt(chatID, 10)); err != nil {
				b.logger.Error("reset", "chat", chatID, "err", err)
				b.say(chatID, "Sorry, I could not start a new conversation. Please try again.")
				return
			}
			b.closeOpenCard(chatID, "", "<i>Conversation reset.</i>")
			b.say(chatID, "Started a new conversation.")
			return
		case "tools":
			b.say(chatID, b.toolsText())
			return
		case "servers":
			b.showServers(chatID, user)
			return
		}
	}
	text := m.Text
	if text == "" {
		text = m.Caption
	}
	if !private {
		text = b.stripMention(text)
	}
	if strings.TrimSpace(text) == "" {
		if private || m.Text != "" {
			b.say(chatID, "I can only read text messages for now.")
		}
		return
	}
	// A typed message answers an open question or denies an open
	// approval (the agent decides); either way its buttons are done.
	b.closeOpenCardFor(chatID, user)
	// In groups the reply quotes the message, as several people may talk.
	replyTo := 0
	if !private {
		replyTo = m.MessageID
	}
	b.runTurn(c, chatID, user, replyTo, agent.Request{Caller: caller(user, chatID), Text: text}, nil)
}

func (b *Bot) handleCancel(m *tgbotapi.Message) {
	if m.From == nil || !b.isAllowed(m.From.ID) {
		return
	}
	if !m.Chat.IsPrivate() && !b.addressed(m) {
		return
	}
	user := m.From.ID
	b.mu.Lock()
	var cancel context.CancelFunc
	var owner int64
	if c := b.chats[m.Chat.ID]; c != nil {
		cancel, owner = c.cancel, c.owner
	}
	b.mu.Unlock()
	// The answers count against the rate limit; a refused one is dropped
	// (they are courtesies, and /cancel itself must keep working).
	switch {
	case cancel == nil:
		if ok, _ := b.allow(user); ok {
			b.say(m.Chat.ID, "Nothing is running.")
		}
	case owner != user && !b.isAdmin(user):
		// In a group, one member must not stop another's request.
		if ok, _ := b.allow(user); ok {
			b.say(m.Chat.ID, "Only the person who asked, or an admin, can stop this request.")
		}
	default:
		// The agent ends the turn with its own "Stopped." message.
		cancel()
	}
}

// runTurn runs one agent turn with the chat's reply machinery, inside the
// global cap on running turns. onFirst runs before the first event.
func (b *Bot) runTurn(c *chat, chatID, user int64, replyTo int, req agent.Request, onFirst func()) error {
	ctx, cancel := context.WithCancel(b.baseCtx)
	defer cancel()
	b.mu.Lock()
	c.cancel, c.owner = cancel, user
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		c.cancel, c.owner = nil, 0
		b.mu.Unlock()
	}()
	select {
	case b.sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-b.sem }()

	r := b.newReply(ctx, chatID, user, replyTo, true, onFirst)
	err := b.agent.Turn(ctx, req, r.emit)
	r.finish()
	if err != nil && !errors.Is(err, agent.ErrNotYours) && !errors.Is(err, agent.ErrStale) {
		if b.baseCtx.Err() == nil {
			b.logger.Error("turn failed", "chat", chatID, "err", err)
		}
		if !r.ended() && b.baseCtx.Err() == nil && ctx.Err() == nil {
			b.say(chatID, "Sorry, something went wrong on my side. Please try again.")
		}
	}
	return err
}

const helpText = `<b>How to use me</b>
Write what you need; I use the connected tools to do it. When I ask a question, tap an option or type your answer. When a tool needs your approval, tap Approve or Deny.

/start – what I can do
/reset – start a new conversation
/tools – connected servers and their tools
/cancel – stop the running request
/servers – manage servers (admins)

In groups, mention me, reply to my message, or use a command.`

func (b *Bot) startText() string {
	cat := b.hub.Catalog()
	var sb strings.Builder
	sb.WriteString("👋 <b>Hi! I am an assistant that acts through tools.</b>\nAsk me anything; I call tools when they help.\n\n")
	running := cat.Running()
	if len(running) == 0 {
		sb.WriteString("No tool servers are connected right now.")
	} else {
		sb.WriteString("Connected:\n")
		for _, s := range running {
			fmt.Fprintf(&sb, "• <b>%s</b> (%s)\n", render.Escape(s.Name), toolCount(len(s.Tools)))
		}
	}
	sb.WriteString("\n/help lists the commands.")
	return sb.String()
}

func (b *Bot) toolsText() string {
	cat := b.hub.Catalog()
	if len(cat.Servers) == 0 {
		return "No MCP servers are configured."
	}
	var sb strings.Builder
	for i, s := range cat.Servers {
		if i > 0 {
			sb.WriteString("\n\n")
		}
		if s.Status != hub.StatusRunning {
			fmt.Fprintf(&sb, "<b>%s</b>: %s", render.Escape(s.Name), render.Escape(string(s.Status)))
			continue
		}
		fmt.Fprintf(&sb, "<b>%s</b>", render.Escape(s.Name))
		for _, t := range s.Tools {
			fmt.Fprintf(&sb, "\n• <code>%s</code>", render.Escape(t.Name))
			if d := firstLine(t.Description); d != "" {
				sb.WriteString(" – " + render.Escape(shorten(d, 100)))
			}
		}
	}
	return sb.String()
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// shorten cuts s to at most n runes, marking the cut.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// toolCount says "1 tool" or "N tools".
func toolCount(n int) string {
	if n == 1 {
		return "1 tool"
	}
	return fmt.Sprintf("%d tools", n)
}
