package bot

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/bot/render"
	"github.com/mcpgram/mcpgram/hub"
)

// Callback data, at most 64 bytes, carries ids, never option text:
//
//	q:<pendingID>:<option>        a follow-up option
//	a:<pendingID>:y|n|A           approve, deny, always allow
//	s:<act>:<page>:<server key>   /servers: d(isable) e(nable) r(estart) p(age)
//
// Every press is authorised when pressed: the agent checks that the
// pending belongs to the presser, and admin rights are checked here.

// A card is a question or approval message whose buttons are live.
type card struct {
	chatID    int64
	msgID     int
	pendingID int64
	kind      string // "question" or "approval"
	user      int64
	html      string
	options   []string
}

func (b *Bot) openCard(c *card) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.openCards == nil {
		b.openCards = map[int64]*card{}
	}
	if old := b.openCards[c.chatID]; old != nil {
		b.cards.Delete(old.pendingID)
	}
	b.openCards[c.chatID] = c
	b.cards.Store(c.pendingID, c)
}

// takeCard forgets the card of pendingID and returns it.
func (b *Bot) takeCard(pendingID int64) *card {
	v, ok := b.cards.LoadAndDelete(pendingID)
	if !ok {
		return nil
	}
	c := v.(*card)
	b.mu.Lock()
	if b.openCards[c.chatID] == c {
		delete(b.openCards, c.chatID)
	}
	b.mu.Unlock()
	return c
}

// closeOpenCard takes the buttons off the chat's open card (of kind, or
// any kind when empty) and appends line to its text.
func (b *Bot) closeOpenCard(chatID int64, kind, line string) {
	b.mu.Lock()
	c := b.openCards[chatID]
	b.mu.Unlock()
	if c == nil || (kind != "" && c.kind != kind) {
		return
	}
	if b.takeCard(c.pendingID) == nil {
		return
	}
	b.closeCard(c, line)
}

// closeOpenCardFor closes what a typed message by user settles: an open
// approval or question of that user. Another user's card stays: only the
// user whose turn it is may settle it.
func (b *Bot) closeOpenCardFor(chatID, user int64) {
	b.mu.Lock()
	c := b.openCards[chatID]
	b.mu.Unlock()
	switch {
	case c == nil:
	case c.kind == "approval" && c.user == user:
		b.closeOpenCard(chatID, "approval", "❌ <i>Denied: a new message came first.</i>")
	case c.user == user:
		b.closeOpenCard(chatID, "question", "💬 <i>Answered by message.</i>")
	}
}

func (b *Bot) closeCard(c *card, line string) {
	if err := b.editHTML(b.baseCtx, c.chatID, c.msgID, c.html+"\n\n"+line, nil); err != nil {
		b.logger.Debug("close card", "chat", c.chatID, "err", err)
		b.removeKeyboard(b.baseCtx, c.chatID, c.msgID)
	}
}

func (b *Bot) sendQuestion(ctx context.Context, chatID, user int64, replyTo int, q *agent.Question) {
	html := "❓ " + render.HTML(q.Text)
	var rows [][]tgbotapi.InlineKeyboardButton
	for i, opt := range q.Options {
		data := fmt.Sprintf("q:%d:%d", q.PendingID, i)
		rows = append(rows, tgbotapi.NewInlineKeyboardRow(tgbotapi.NewInlineKeyboardButtonData(shorten(oneLine(opt), 40), data)))
	}
	var markup any
	if len(rows) > 0 {
		markup = tgbotapi.NewInlineKeyboardMarkup(rows...)
	}
	m, err := b.sendLong(ctx, chatID, replyTo, html, markup)
	if err != nil {
		b.logger.Error("send question", "chat", chatID, "err", err)
		return
	}
	if len(rows) > 0 {
		parts := render.Split(html, render.MaxMessageLen)
		b.openCard(&card{chatID: chatID, msgID: m.MessageID, pendingID: q.PendingID, kind: "question", user: user, html: parts[len(parts)-1], options: q.Options})
	}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func (b *Bot) sendApproval(ctx context.Context, chatID, user int64, replyTo int, a *agent.Approval) {
	var summary string
	var cut bool
	html := approvalTitle(a)
	if a.Tool != "" {
		summary, cut = render.Args(a.Arguments)
		html += "\n" + summary
	}
	var expiry string
	if !a.ExpiresAt.IsZero() {
		expiry = fmt.Sprintf("\n<i>Expires in %s if nobody answers.</i>", roundDuration(time.Until(a.ExpiresAt)))
	}
	var attach []byte
	if cut {
		full := render.PrettyJSON(a.Arguments)
		quoted := html + "\n<blockquote expandable>" + render.Escape(full) + "</blockquote>" + expiry
		if utf8.RuneCountInString(render.PlainText(quoted)) <= render.MaxMessageLen {
			html = quoted
		} else {
			html += "\n<i>The arguments in full are in " + argsFileName + ", below.</i>" + expiry
			attach = []byte(full)
		}
	} else {
		html += expiry
	}
	yes, no := "✅ Approve", "❌ Deny"
	if a.Consent {
		yes, no = "✅ I agree", "❌ No"
	}
	rows := [][]tgbotapi.InlineKeyboardButton{tgbotapi.NewInlineKeyboardRow(
		tgbotapi.NewInlineKeyboardButtonData(yes, fmt.Sprintf("a:%d:y", a.PendingID)),
		tgbotapi.NewInlineKeyboardButtonData(no, fmt.Sprintf("a:%d:n", a.PendingID)),
	)}
	// A consent call is the user's say on each call: nobody may answer it
	// for good.
	if b.isAdmin(user) && !a.Consent {
		what := shorten(a.Tool, 30)
		if a.Tool == "" {
			what = "this resource"
		}
		rows = append(rows, tgbotapi.NewInlineKeyboardRow(
			tgbotapi.NewInlineKeyboardButtonData("♾ Always allow "+what, fmt.Sprintf("a:%d:A", a.PendingID))))
	}
	// A card of many arguments takes several messages; the buttons go on
	// the last, after every argument was shown.
	m, err := b.sendLong(ctx, chatID, replyTo, html, tgbotapi.NewInlineKeyboardMarkup(rows...))
	if err != nil {
		b.logger.Error("send approval", "chat", chatID, "err", err)
		return
	}
	if attach != nil {
		doc := tgbotapi.NewDocument(chatID, tgbotapi.FileBytes{Name: argsFileName, Bytes: attach})
		doc.ReplyToMessageID = m.MessageID
		if _, err := b.send(ctx, doc); err != nil {
			b.logger.Error("send approval arguments", "chat", chatID, "err", err)
		}
	}
	parts := render.Split(html, render.MaxMessageLen)
	b.openCard(&card{chatID: chatID, msgID: m.MessageID, pendingID: a.PendingID, kind: "approval", user: user, html: parts[len(parts)-1]})
}

// approvalTitle says what the card asks: a tool to run, a resource to
// read, or a call that needs the user's own consent.
func approvalTitle(a *agent.Approval) string {
	switch {
	case a.Tool == "":
		return fmt.Sprintf("🔐 <b>Approval needed</b>\nRead <code>%s</code> from <b>%s</b>.", render.Escape(a.URI), render.Escape(a.Server))
	case a.Consent:
		return fmt.Sprintf("🔏 <b>Your consent is needed</b>\n<b>%s</b> acts on this only with your own agreement. Run <code>%s</code> with:", render.Escape(a.Server), render.Escape(a.Tool))
	}
	return fmt.Sprintf("🔐 <b>Approval needed</b>\nRun <code>%s</code> on <b>%s</b> with:", render.Escape(a.Tool), render.Escape(a.Server))
}

func roundDuration(d time.Duration) string {
	if d >= time.Minute {
		return fmt.Sprintf("%d min", int((d+30*time.Second)/time.Minute))
	}
	return fmt.Sprintf("%d s", max(1, int(d.Round(time.Second)/time.Second)))
}

// handlePress handles a follow-up option or approval button, in the
// chat's worker: the press starts a turn.
func (b *Bot) handlePress(c *chat, cq *tgbotapi.CallbackQuery) {
	ctx := b.baseCtx
	user, chatID, msgID := cq.From.ID, cq.Message.Chat.ID, cq.Message.MessageID
	if !b.isAllowed(user) {
		b.answerCallback(ctx, cq.ID, "Sorry, this bot is private.", true)
		return
	}
	if !b.allowPress(cq) {
		return
	}
	parts := strings.Split(cq.Data, ":")
	var id int64
	var err error
	if len(parts) == 3 {
		id, err = strconv.ParseInt(parts[1], 10, 64)
	}
	if len(parts) != 3 || err != nil {
		b.answerCallback(ctx, cq.ID, "This button is no longer valid.", true)
		return
	}
	req := agent.Request{Caller: caller(user, chatID)}
	var ack, line string
	switch parts[0] {
	case "q":
		opt, err := strconv.Atoi(parts[2])
		if err != nil || opt < 0 {
			b.answerCallback(ctx, cq.ID, "This button is no longer valid.", true)
			return
		}
		req.Answer = &agent.Answer{PendingID: id, Option: opt}
		choice := buttonText(cq.Message, cq.Data)
		if v, ok := b.cards.Load(id); ok && opt < len(v.(*card).options) {
			choice = v.(*card).options[opt]
		}
		ack, line = "Got it", "→ <b>"+render.Escape(choice)+"</b>"
	case "a":
		switch parts[2] {
		case "y":
			req.Decision = &agent.Decision{PendingID: id, Approve: true}
			ack, line = "Approved", "✅ <i>Approved.</i>"
		case "n":
			req.Decision = &agent.Decision{PendingID: id}
			ack, line = "Denied", "❌ <i>Denied.</i>"
		case "A":
			if !b.isAdmin(user) {
				b.answerCallback(ctx, cq.ID, "Only admins can always allow a tool.", true)
				return
			}
			req.Decision = &agent.Decision{PendingID: id, Approve: true, Always: true}
			ack, line = "Always allowed", "✅ <i>Approved, and always allowed from now on.</i>"
		default:
			b.answerCallback(ctx, cq.ID, "This button is no longer valid.", true)
			return
		}
	default:
		b.answerCallback(ctx, cq.ID, "This button is no longer valid.", true)
		return
	}

	// The agent refuses a press (ErrNotYours, ErrStale) at once and emits
	// nothing; its first event means it accepted. A model slow to emit
	// must not leave the button spinning, so a timer accepts it too.
	var once sync.Once
	var accepted atomic.Bool
	onFirst := func() {
		once.Do(func() {
			accepted.Store(true)
			b.answerCallback(ctx, cq.ID, ack, false)
			cd := b.takeCard(id)
			if cd == nil {
				cd = &card{chatID: chatID, msgID: msgID, html: render.Escape(cq.Message.Text)}
			}
			b.closeCard(cd, line)
		})
	}
	timer := time.AfterFunc(pressAckAfter, onFirst)
	err = b.runTurn(c, chatID, user, 0, req, onFirst)
	timer.Stop()
	if accepted.Load() {
		return
	}
	switch {
	case errors.Is(err, agent.ErrNotYours):
		b.answerCallback(ctx, cq.ID, "This is someone else's request; only they can answer it.", true)
	case errors.Is(err, agent.ErrStale):
		b.answerCallback(ctx, cq.ID, "This request is no longer open.", true)
	case err == nil:
		timer.Stop()
		onFirst()
	default:
		b.answerCallback(ctx, cq.ID, "Sorry, something went wrong.", true)
	}
}

// allowPress applies the per-user rate limit to a press, answering one
// over the limit with an alert so that its button does not keep spinning.
func (b *Bot) allowPress(cq *tgbotapi.CallbackQuery) bool {
	if ok, _ := b.allow(cq.From.ID); ok {
		return true
	}
	b.answerCallback(b.baseCtx, cq.ID, fmt.Sprintf("You are pressing buttons faster than I can keep up with (at most %d a minute). Please wait a moment and try again.", b.cfg.RateLimitPerMinute), true)
	return false
}

// pressAckAfter is how long a press waits for the agent's first event
// before it is acknowledged anyway; refusals come much sooner.
const pressAckAfter = 3 * time.Second

// buttonText finds the label of the button with data on m.
func buttonText(m *tgbotapi.Message, data string) string {
	if m == nil || m.ReplyMarkup == nil {
		return ""
	}
	for _, row := range m.ReplyMarkup.InlineKeyboard {
		for _, btn := range row {
			if btn.CallbackData != nil && *btn.CallbackData == data {
				return btn.Text
			}
		}
	}
	return ""
}

const serversPerPage = 8

// argsFileName is the attachment holding arguments too long to quote.
const argsFileName = "arguments.json"

// serverKey names a server in callback data: its name when that fits in
// 64 bytes, else a hash of it.
func serverKey(act string, page int, name string) string {
	data := fmt.Sprintf("s:%s:%d:%s", act, page, name)
	if len(data) <= 64 {
		return data
	}
	sum := sha256.Sum256([]byte(name))
	return fmt.Sprintf("s:%s:%d:#%s", act, page, hex.EncodeToString(sum[:8]))
}

func findServer(cat hub.Catalog, key string) (hub.ServerInfo, bool) {
	if strings.HasPrefix(key, "#") {
		for _, s := range cat.Servers {
			sum := sha256.Sum256([]byte(s.Name))
			if "#"+hex.EncodeToString(sum[:8]) == key {
				return s, true
			}
		}
		return hub.ServerInfo{}, false
	}
	return cat.Server(key)
}

// serversView renders one page of /servers.
func (b *Bot) serversView(page int) (string, tgbotapi.InlineKeyboardMarkup) {
	cat := b.hub.Catalog()
	pages := max(1, (len(cat.Servers)+serversPerPage-1)/serversPerPage)
	page = min(max(page, 0), pages-1)
	var sb strings.Builder
	sb.WriteString("<b>MCP servers</b>")
	if pages > 1 {
		fmt.Fprintf(&sb, " (page %d of %d)", page+1, pages)
	}
	if len(cat.Servers) == 0 {
		sb.WriteString("\n\nNone configured.")
	}
	var rows [][]tgbotapi.InlineKeyboardButton
	lo, hi := page*serversPerPage, min((page+1)*serversPerPage, len(cat.Servers))
	for _, s := range cat.Servers[lo:hi] {
		name := render.Escape(s.Name)
		switch s.Status {
		case hub.StatusRunning:
			fmt.Fprintf(&sb, "\n\n🟢 <b>%s</b>: running, %s", name, toolCount(len(s.Tools)))
		case hub.StatusStarting:
			fmt.Fprintf(&sb, "\n\n🟡 <b>%s</b>: starting…", name)
		case hub.StatusDisabled:
			fmt.Fprintf(&sb, "\n\n⚪ <b>%s</b>: disabled", name)
		case hub.StatusFailed:
			fmt.Fprintf(&sb, "\n\n🔴 <b>%s</b>: failed", name)
			if s.Error != "" {
				sb.WriteString(": " + render.Escape(shorten(s.Error, 200)))
			}
			if s.LastStderr != "" {
				sb.WriteString("\n<i>stderr:</i> <code>" + render.Escape(shorten(s.LastStderr, 200)) + "</code>")
			}
		default:
			fmt.Fprintf(&sb, "\n\n⚫ <b>%s</b>: %s", name, render.Escape(string(s.Status)))
		}
		label := shorten(s.Name, 24)
		var row []tgbotapi.InlineKeyboardButton
		if s.Status == hub.StatusDisabled {
			row = append(row, tgbotapi.NewInlineKeyboardButtonData("Enable "+label, serverKey("e", page, s.Name)))
		} else {
			row = append(row, tgbotapi.NewInlineKeyboardButtonData("Disable "+label, serverKey("d", page, s.Name)))
		}
		if s.Status == hub.StatusFailed {
			row = append(row, tgbotapi.NewInlineKeyboardButtonData("Restart "+label, serverKey("r", page, s.Name)))
		}
		rows = append(rows, row)
	}
	if pages > 1 {
		var nav []tgbotapi.InlineKeyboardButton
		if page > 0 {
			nav = append(nav, tgbotapi.NewInlineKeyboardButtonData("◀ Previous", fmt.Sprintf("s:p:%d:", page-1)))
		}
		if page < pages-1 {
			nav = append(nav, tgbotapi.NewInlineKeyboardButtonData("Next ▶", fmt.Sprintf("s:p:%d:", page+1)))
		}
		rows = append(rows, nav)
	}
	return sb.String(), tgbotapi.InlineKeyboardMarkup{InlineKeyboard: rows}
}

func (b *Bot) showServers(chatID, user int64) {
	if !b.isAdmin(user) {
		b.say(chatID, "Sorry, only admins can manage servers.")
		return
	}
	html, kb := b.serversView(0)
	var markup any
	if len(kb.InlineKeyboard) > 0 {
		markup = kb
	}
	if _, err := b.sendHTML(b.baseCtx, chatID, 0, html, markup); err != nil {
		b.logger.Error("send /servers", "chat", chatID, "err", err)
	}
}

// handleServerPress acts on a /servers button at once, out of band.
func (b *Bot) handleServerPress(cq *tgbotapi.CallbackQuery) {
	ctx := b.baseCtx
	if cq.From == nil || cq.Message == nil || cq.Message.Chat == nil {
		b.answerCallback(ctx, cq.ID, "This button is no longer valid.", true)
		return
	}
	if !b.isAdmin(cq.From.ID) {
		b.logger.Warn("/servers button pressed by a non-admin; ignored", "user", cq.From.ID, "data", cq.Data)
		b.answerCallback(ctx, cq.ID, "Only admins can manage servers.", true)
		return
	}
	if !b.allowPress(cq) {
		return
	}
	parts := strings.SplitN(cq.Data, ":", 4)
	if len(parts) != 4 || parts[0] != "s" {
		b.answerCallback(ctx, cq.ID, "This button is no longer valid.", true)
		return
	}
	page, _ := strconv.Atoi(parts[2])
	if parts[1] == "p" {
		b.answerCallback(ctx, cq.ID, "", false)
		b.editServers(cq, page, "")
		return
	}
	s, ok := findServer(b.hub.Catalog(), parts[3])
	if !ok {
		b.answerCallback(ctx, cq.ID, "That server is no longer configured.", true)
		return
	}
	var act func(context.Context) error
	var done string
	switch parts[1] {
	case "d":
		act, done = func(ctx context.Context) error { return b.hub.SetEnabled(ctx, s.Name, false) }, "Disabled "+s.Name
	case "e":
		act, done = func(ctx context.Context) error { return b.hub.SetEnabled(ctx, s.Name, true) }, "Enabled "+s.Name
	case "r":
		act, done = func(ctx context.Context) error { return b.hub.Restart(ctx, s.Name) }, "Restarted "+s.Name
	default:
		b.answerCallback(ctx, cq.ID, "This button is no longer valid.", true)
		return
	}
	// Starting a server can take a while: past pressAckAfter the button
	// stops spinning and any failure shows in the message instead.
	var once sync.Once
	var early atomic.Bool
	timer := time.AfterFunc(pressAckAfter, func() {
		once.Do(func() { early.Store(true); b.answerCallback(ctx, cq.ID, "Working on it…", false) })
	})
	actx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	err := act(actx)
	cancel()
	timer.Stop()
	note := ""
	if err != nil {
		b.logger.Error("/servers action", "server", s.Name, "action", parts[1], "err", err)
		msg := shorten(fmt.Sprintf("Could not do that to %s: %v", s.Name, err), 190)
		once.Do(func() { b.answerCallback(ctx, cq.ID, msg, true) })
		if early.Load() {
			note = "⚠️ " + render.Escape(msg)
		}
	} else {
		once.Do(func() { b.answerCallback(ctx, cq.ID, shorten(done, 190), false) })
	}
	b.editServers(cq, page, note)
}

// editServers redraws the /servers message on page, with an optional note.
func (b *Bot) editServers(cq *tgbotapi.CallbackQuery, page int, note string) {
	html, kb := b.serversView(page)
	if note != "" {
		html += "\n\n" + note
	}
	if err := b.editHTML(b.baseCtx, cq.Message.Chat.ID, cq.Message.MessageID, html, &kb); err != nil {
		b.logger.Error("edit /servers", "err", err)
	}
}
