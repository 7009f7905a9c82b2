package bot

import (
	"context"
	"fmt"
	"math/rand/v2"
	"mime"
	"net/url"
	"path"
	"strings"
	"sync"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/bot/render"
	"github.com/mcpgram/mcpgram/hub"
)

// A reply turns the events of one turn into Telegram messages: "typing"
// while it runs, one status message edited as tools run, a draft edited
// as the model streams (private chats), photos, and the final answer,
// question or approval.
//
// Streaming uses sendMessageDraft (Bot API 9.3+, private chats) where the
// server has it: an ephemeral preview that the final sendMessage replaces.
// Where it does not (older or local API servers answer 404), it falls back
// to throttled edits of a draft message, deleted when the final message is
// sent, so the answer always arrives as a new message with a notification.
type reply struct {
	b *Bot
	// base is the job's context: replies go out even after /cancel ended
	// ctx, the turn's.
	base    context.Context
	ctx     context.Context
	chatID  int64
	user    int64
	replyTo int // the user's message, quoted by the final message in groups
	private bool

	first   sync.Once
	onFirst func()

	mu        sync.Mutex
	status    int // message id of the status message
	tools     []string
	draft     int   // message id of the edited draft (fallback)
	draftID   int64 // sendMessageDraft's draft_id for this turn
	draftHTML string
	lastDraft time.Time
	firstText time.Time // of the current model call's text
	done      bool      // a terminal event was handled

	stopTyping chan struct{}
	typingDone chan struct{}
}

func (b *Bot) newReply(base, ctx context.Context, chatID, user int64, replyTo int, typing bool, onFirst func()) *reply {
	r := &reply{b: b, base: base, ctx: ctx, chatID: chatID, user: user, replyTo: replyTo, private: chatID > 0, onFirst: onFirst}
	if typing {
		r.stopTyping = make(chan struct{})
		r.typingDone = make(chan struct{})
		go r.typing()
	}
	return r
}

func (r *reply) typing() {
	defer close(r.typingDone)
	t := time.NewTicker(r.b.cfg.TypingInterval)
	defer t.Stop()
	for {
		// One try only: a missed "typing" is not worth a delay.
		if err := r.b.tg.Try(tgbotapi.NewChatAction(r.chatID, tgbotapi.ChatTyping)); err != nil {
			r.b.logger.Debug("sendChatAction", "chat", r.chatID, "err", err)
		}
		select {
		case <-r.stopTyping:
			return
		case <-r.ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (r *reply) ended() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.done
}

// finish stops "typing" and leaves the status message as a summary.
func (r *reply) finish() {
	if r.stopTyping != nil {
		close(r.stopTyping)
		<-r.typingDone
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.status != 0 && len(r.tools) > 0 {
		if err := r.b.tg.EditHTML(r.base, r.chatID, r.status, strings.Join(r.tools, "\n"), nil); err != nil {
			r.b.logger.Debug("final status edit", "err", err)
		}
	}
}

func (r *reply) emit(ev agent.Event) {
	if r.onFirst != nil {
		r.first.Do(r.onFirst)
	}
	if ev.Kind == agent.EventError && r.base.Err() != nil {
		// Shutting down: the update stays in the inbox and runs again.
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	ctx := r.base
	switch ev.Kind {
	case agent.EventText:
		r.streamLocked(ctx, ev.Text)
	case agent.EventToolStart:
		what := fmt.Sprintf("<code>%s</code> on <b>%s</b>", render.Escape(ev.Tool), render.Escape(ev.Server))
		if ev.Tool == "" && ev.URI != "" {
			what = fmt.Sprintf("<code>%s</code> on <b>%s</b>", render.Escape(render.Shorten(ev.URI, 80)), render.Escape(ev.Server))
		}
		r.firstText = time.Time{} // the next model call streams afresh
		r.tools = append(r.tools, "⏳ "+what)
		lines := append([]string(nil), r.tools...)
		lines[len(lines)-1] = "⏳ Calling " + what + "…"
		r.statusLocked(ctx, strings.Join(lines, "\n"))
	case agent.EventToolEnd:
		mark := "✅"
		if !ev.OK {
			mark = "⚠️"
		}
		for i := len(r.tools) - 1; i >= 0; i-- {
			if strings.HasPrefix(r.tools[i], "⏳ ") {
				r.tools[i] = mark + strings.TrimPrefix(r.tools[i], "⏳") + fmt.Sprintf(" · %.1fs", ev.Duration.Seconds())
				break
			}
		}
		for i, img := range ev.Images {
			if err := r.b.tg.SendPhoto(ctx, r.chatID, img.Data, img.MIMEType, fmt.Sprintf("%s · %s", ev.Tool, ev.Server), i); err != nil {
				r.b.logger.Error("send photo", "chat", r.chatID, "err", err)
				r.b.say(ctx, r.chatID, "(A tool returned an image that Telegram did not accept.)")
			}
		}
		for _, f := range ev.Files {
			if err := r.b.tg.SendFile(ctx, r.chatID, f.Data, fileName(f), fmt.Sprintf("%s · %s", ev.Tool, ev.Server)); err != nil {
				r.b.logger.Error("send a file", "chat", r.chatID, "err", err)
				r.b.say(ctx, r.chatID, "(A tool returned a file that Telegram did not accept.)")
			}
		}
	case agent.EventAnswer:
		r.done = true
		r.dropDraftLocked(ctx)
		if _, err := r.b.tg.SendLong(ctx, r.chatID, r.replyTo, render.HTML(ev.Text), nil); err != nil {
			r.b.logger.Error("send answer", "chat", r.chatID, "err", err)
		}
	case agent.EventQuestion:
		r.done = true
		r.dropDraftLocked(ctx)
		if ev.Question != nil {
			r.b.sendQuestion(ctx, r.chatID, r.user, r.replyTo, ev.Question)
		}
	case agent.EventApproval:
		r.done = true
		r.dropDraftLocked(ctx)
		if ev.Approval != nil {
			r.b.sendApproval(ctx, r.chatID, r.user, r.replyTo, ev.Approval)
		}
	case agent.EventNotice:
		r.b.say(ctx, r.chatID, render.Escape(ev.Text))
	case agent.EventError:
		r.done = true
		r.dropDraftLocked(ctx)
		text := ev.Text
		if text == "" {
			text = "Sorry, something went wrong."
		}
		if _, err := r.b.tg.SendLong(ctx, r.chatID, r.replyTo, render.Escape(text), nil); err != nil {
			r.b.logger.Error("send error message", "chat", r.chatID, "err", err)
		}
	}
}

func (r *reply) statusLocked(ctx context.Context, html string) {
	if r.status != 0 {
		if err := r.b.tg.EditHTML(ctx, r.chatID, r.status, html, nil); err != nil {
			r.b.logger.Debug("edit status", "err", err)
		}
		return
	}
	m, err := r.b.tg.SendHTML(ctx, r.chatID, 0, html, nil)
	if err != nil {
		r.b.logger.Debug("send status", "err", err)
		return
	}
	r.status = m.MessageID
}

// streamLocked shows the model's text as it grows, at most one edit per
// StreamInterval, in private chats only (groups get only the final text).
func (r *reply) streamLocked(ctx context.Context, text string) {
	if !r.private {
		return
	}
	// No draft for text that comes and goes within one interval (a line
	// before a tool call, a short answer): it would only flicker.
	if r.firstText.IsZero() {
		r.firstText = time.Now()
	}
	if time.Since(r.firstText) < r.b.cfg.StreamInterval || time.Since(r.lastDraft) < r.b.cfg.StreamInterval {
		return
	}
	parts := render.Split(render.HTML(text), render.MaxMessageLen-10)
	if len(parts) == 0 {
		return
	}
	html := parts[len(parts)-1] + " ▌"
	if html == r.draftHTML {
		return
	}
	r.lastDraft = time.Now()
	r.draftHTML = html
	if r.draftID == 0 {
		r.draftID = rand.Int64N(1<<31-1) + 1
	}
	if r.b.tg.SendDraft(r.chatID, r.draftID, html) {
		return
	}
	if r.draft != 0 {
		if err := r.b.tg.EditHTML(ctx, r.chatID, r.draft, html, nil); err != nil {
			r.b.logger.Debug("edit draft", "err", err)
		}
		return
	}
	m, err := r.b.tg.SendHTML(ctx, r.chatID, 0, html, nil)
	if err != nil {
		r.b.logger.Debug("send draft", "err", err)
		return
	}
	r.draft = m.MessageID
}

func (r *reply) dropDraftLocked(ctx context.Context) {
	if r.draft == 0 {
		return
	}
	if _, err := r.b.tg.Request(ctx, tgbotapi.NewDeleteMessage(r.chatID, r.draft)); err != nil {
		r.b.logger.Debug("delete draft", "err", err)
	}
	r.draft, r.draftHTML = 0, ""
}

// fileName names a file a tool returned: the last part of its URI, or
// "file" with an extension for its type. What would hide part of the
// name or reverse it shows (render.Visible): the name is what the user
// judges the file by.
func fileName(c hub.Content) string {
	if u, err := url.Parse(c.URI); err == nil {
		if name := path.Base(u.Path); name != "" && name != "/" && name != "." && len(name) <= 64 {
			return render.Visible(name)
		}
	}
	if exts, _ := mime.ExtensionsByType(c.MIMEType); len(exts) > 0 {
		return "file" + exts[0]
	}
	return "file"
}
