package bot

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"
	"unicode/utf8"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/bot/render"
	"github.com/mcpgram/mcpgram/bot/telegram"
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
	at      telegram.Place // where the turn's messages go
	key     string         // the turn's conversation
	user    int64
	replyTo int // the user's message, quoted by the final message in groups
	private bool
	// cancel, when set, ends the turn once its topic is gone (see gone).
	cancel context.CancelCauseFunc

	first   sync.Once
	onFirst func()

	// stop is the turn's id, which the status message's Stop button
	// carries; "" shows none.
	stop string

	mu         sync.Mutex
	status     int // message id of the status message
	statusHTML string
	tools      []toolLine
	draft      int   // message id of the edited draft (fallback)
	draftID    int64 // sendMessageDraft's draft_id for this turn
	draftHTML  string
	view       render.Draft // what the draft shows of the streamed text
	lastDraft  time.Time
	firstText  time.Time // of the current model call's text
	done       bool      // a terminal event was handled

	stopTyping chan struct{}
	typingDone chan struct{}
}

func (b *Bot) newReply(base, ctx context.Context, at telegram.Place, key string, user int64, replyTo int, typing bool, onFirst func()) *reply {
	return b.newStoppableReply(base, ctx, nil, at, key, user, replyTo, typing, onFirst, "")
}

// newStoppableReply is newReply for turn stop, whose status message has
// a Stop button, and which cancel ends (see gone).
func (b *Bot) newStoppableReply(base, ctx context.Context, cancel context.CancelCauseFunc, at telegram.Place, key string, user int64, replyTo int, typing bool, onFirst func(), stop string) *reply {
	r := &reply{b: b, base: base, ctx: ctx, cancel: cancel, at: at, key: key, user: user, replyTo: replyTo, private: at.Chat > 0, onFirst: onFirst, stop: stop}
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
		if err := r.gone(r.b.tg.Typing(r.at)); err != nil {
			r.b.logger.Debug("sendChatAction", "chat", r.at, "err", err)
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
		// Its Stop button goes with this edit.
		if err := r.b.tg.EditHTML(r.base, r.at.Chat, r.status, statusText(r.tools, true), nil); err != nil {
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
	if errors.Is(context.Cause(r.ctx), errTopicGone) {
		return // nothing more can be said there
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	ctx := r.base
	switch ev.Kind {
	case agent.EventText:
		r.streamLocked(ctx, ev.Text)
	case agent.EventToolStart:
		r.firstText = time.Time{} // the next model call streams afresh
		r.tools = append(r.tools, toolLine{call: ev.Call, what: r.b.toolWhat(ev.Server, ev.Tool, ev.URI), mark: markRunning})
		r.statusLocked(ctx, statusText(r.tools, false))
	case agent.EventToolProgress:
		if r.progressLocked(ev.Progress) {
			r.statusLocked(ctx, statusText(r.tools, false))
		}
	case agent.EventToolEnd:
		r.toolEndLocked(ctx, ev)
	case agent.EventAnswer:
		r.done = true
		r.dropDraftLocked(ctx)
		if _, _, err := r.b.sendBounded(ctx, r.at, r.replyTo, ev.Text, "answer", nil); r.gone(err) != nil {
			r.b.logger.Error("send answer", "chat", r.at, "err", err)
		}
	case agent.EventQuestion:
		r.done = true
		r.dropDraftLocked(ctx)
		if ev.Question != nil {
			r.b.sendQuestion(ctx, r.at, r.key, r.user, r.replyTo, ev.Question)
		}
	case agent.EventApproval:
		r.done = true
		r.dropDraftLocked(ctx)
		if ev.Approval != nil {
			r.b.sendApproval(ctx, r.at, r.key, r.user, r.replyTo, ev.Approval)
		}
	case agent.EventNotice:
		r.b.say(ctx, r.at, render.Escape(ev.Text))
	case agent.EventForm:
		if ev.Form != nil {
			r.b.forms.Show(ctx, r.at, r.key, r.user, ev.Form)
		}
	case agent.EventFormClosed:
		if ev.Form != nil {
			r.b.forms.Update(ctx, r.at.Chat, 0, ev.Form)
		}
	case agent.EventError:
		r.done = true
		r.dropDraftLocked(ctx)
		text := ev.Text
		if text == "" {
			text = "Sorry, something went wrong."
		}
		if _, err := r.b.tg.SendLong(ctx, r.at, r.replyTo, render.Escape(text), nil); err != nil {
			r.b.logger.Error("send error message", "chat", r.at, "err", err)
		}
	}
}

// toolEndLocked shows a call's end: its status line, and what it
// returned to show the user (images, files, resource links).
func (r *reply) toolEndLocked(ctx context.Context, ev agent.Event) {
	mark := "✅"
	if !ev.OK {
		mark = "⚠️"
	}
	if l := r.lineLocked(ev.Call); l != nil {
		l.mark, l.took, l.progress = mark, fmt.Sprintf(" · %.1fs", ev.Duration.Seconds()), ""
	}
	for i, img := range ev.Images {
		if err := r.gone(r.b.tg.SendPhoto(ctx, r.at, img.Data, img.MIMEType, fmt.Sprintf("%s · %s", ev.Tool, ev.Server), i)); err != nil {
			r.b.logger.Error("send photo", "chat", r.at, "err", err)
			r.b.say(ctx, r.at, "(A tool returned an image that Telegram did not accept.)")
		}
	}
	for _, f := range ev.Files {
		if err := r.gone(r.b.tg.SendFile(ctx, r.at, 0, f.Data, render.FileName(f), fmt.Sprintf("%s · %s", ev.Tool, ev.Server))); err != nil {
			r.b.logger.Error("send a file", "chat", r.at, "err", err)
			r.b.say(ctx, r.at, "(A tool returned a file that Telegram did not accept.)")
		}
	}
	r.b.links.Show(ctx, r.at, r.key, r.user, ev.Server, ev.Tool, ev.Links)
}

func (r *reply) statusLocked(ctx context.Context, html string) {
	if html == r.statusHTML {
		return // Telegram refuses an edit that changes nothing
	}
	r.statusHTML = html
	markup := r.stopMarkup()
	if r.status != 0 {
		if err := r.b.tg.EditHTML(ctx, r.at.Chat, r.status, html, markup); err != nil {
			r.b.logger.Debug("edit status", "err", err)
		}
		return
	}
	var send any
	if markup != nil {
		send = markup
	}
	m, err := r.b.tg.SendHTML(ctx, r.at, 0, html, send)
	if r.gone(err) != nil {
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
	html := r.view.HTML(text)
	if html == "" || html == r.draftHTML {
		return
	}
	r.lastDraft = time.Now()
	r.draftHTML = html
	if r.draftID == 0 {
		r.draftID = rand.Int64N(1<<31-1) + 1
	}
	if r.b.tg.SendDraft(r.at, r.draftID, html) {
		return
	}
	if r.draft != 0 {
		if err := r.b.tg.EditHTML(ctx, r.at.Chat, r.draft, html, nil); err != nil {
			r.b.logger.Debug("edit draft", "err", err)
		}
		return
	}
	m, err := r.b.tg.SendHTML(ctx, r.at, 0, html, nil)
	if r.gone(err) != nil {
		r.b.logger.Debug("send draft", "err", err)
		return
	}
	r.draft = m.MessageID
}

// abandon ends a reply that will not be given now (its turn runs again
// later): its draft goes.
func (r *reply) abandon() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dropDraftLocked(r.base)
}

func (r *reply) dropDraftLocked(ctx context.Context) {
	if r.draft == 0 {
		return
	}
	if _, err := r.b.tg.Request(ctx, tgbotapi.NewDeleteMessage(r.at.Chat, r.draft)); err != nil {
		r.b.logger.Debug("delete draft", "err", err)
	}
	r.draft, r.draftHTML = 0, ""
}

// maxParts is how many messages a model's answer or question may take;
// beyond them it goes as a file. Four messages are about 16,000
// characters, more than anyone reads in a chat; an 8 MiB answer would
// otherwise be 2,050 messages, paced over half an hour.
const maxParts = 4

// sendBounded sends the Markdown md as Telegram messages, the first a
// reply to replyTo and markup on the last, and returns the last and its
// HTML. Beyond maxParts messages, the whole text goes as a file, kind +
// ".md", written from the messages' HTML (render.Document: what the chat
// would show, not md as the model wrote it), followed by one message with
// its beginning (and markup).
func (b *Bot) sendBounded(ctx context.Context, to telegram.Place, replyTo int, md, kind string, markup any) (tgbotapi.Message, string, error) {
	html := render.HTML(md)
	parts := render.Split(html, render.MaxMessageLen)
	if len(parts) <= maxParts {
		m, err := b.tg.SendLong(ctx, to, replyTo, html, markup)
		if len(parts) == 0 {
			return m, "", err
		}
		return m, parts[len(parts)-1], err
	}
	name, doc := kind+".md", render.Document(html)
	caption := fmt.Sprintf("The whole %s: %s characters, too long for chat messages.", kind, render.Grouped(int64(utf8.RuneCountInString(doc))))
	if err := b.tg.SendFile(ctx, to, 0, []byte(doc), name, caption); err != nil {
		b.logger.Error("send a long "+kind+" as a file", "chat", to, "err", err)
		name = ""
	}
	note := fmt.Sprintf("\n\n<i>… The %s goes on in %s above.</i>", kind, name)
	if name == "" {
		note = fmt.Sprintf("\n\n<i>… The rest of the %s could not be sent.</i>", kind)
	}
	start := render.Split(html, render.MaxMessageLen-len(note))[0] + note
	m, err := b.tg.SendLong(ctx, to, replyTo, start, markup)
	return m, start, err
}
