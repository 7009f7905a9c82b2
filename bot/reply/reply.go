// Package reply turns the events of one agent turn into Telegram
// messages: "typing" while it runs, one status message edited as its
// tools run (with a Stop button), a draft edited as the model streams in
// private chats, what the tools returned to show, and the turn's last
// word: an answer, a question or approval card, or an error.
package reply

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/bot/apps"
	"github.com/mcpgram/mcpgram/bot/forms"
	"github.com/mcpgram/mcpgram/bot/links"
	"github.com/mcpgram/mcpgram/bot/render"
	"github.com/mcpgram/mcpgram/bot/telegram"
)

// Cards sends the cards a turn ends with when it waits for its user; the
// bot keeps them, for their presses.
type Cards interface {
	Question(ctx context.Context, at telegram.Place, key string, user int64, replyTo int, q *agent.Question)
	Approval(ctx context.Context, at telegram.Place, key string, user int64, replyTo int, a *agent.Approval)
}

// Parts are what every reply of a bot shows its turn with.
type Parts struct {
	TG    *telegram.Client
	Cards Cards
	Forms *forms.Cards // the forms servers ask for mid-call
	Links *links.Links // the resource links of tools' results
	Apps  *apps.Apps   // the MCP Apps of tools' calls; nil: none shown
	// What names a call on its status line.
	What func(server, tool, uri string) string
	// Task shows a call that became a task (agent.EventTask); nil shows
	// nothing.
	Task   func(ctx context.Context, at telegram.Place, replyTo int, t *agent.Task)
	Logger *slog.Logger
	// TypingInterval re-sends "typing" while a turn runs; StreamInterval
	// is the least time between two edits of a streamed draft.
	TypingInterval, StreamInterval time.Duration
}

// A Spec is the turn a reply is for.
type Spec struct {
	// Base is the job's context: replies go out even after /cancel
	// ended Ctx, the turn's. Cancel, when set, ends the turn once its
	// topic is gone (see ErrTopicGone).
	Base, Ctx context.Context
	Cancel    context.CancelCauseFunc
	At        telegram.Place // where the turn's messages go
	Key       string         // the turn's conversation
	User      int64
	ReplyTo   int  // the user's message, quoted by the final message in groups
	Typing    bool // send "typing" while the turn runs
	OnFirst   func()
	// Stop is the turn's id, which the status message's Stop button
	// carries; "" shows none.
	Stop string
}

// ErrTopicGone is the cause a turn ends with when its topic was closed
// or deleted under it.
var ErrTopicGone = errors.New("the topic was closed or deleted")

// gone ends the turn when err says its topic was closed or deleted
// (telegram.TopicGone): nothing more can be said there, and the model's
// work for it would go nowhere. It returns err.
func (r *Reply) gone(err error) error {
	if r.cancel != nil && telegram.TopicGone(err) {
		r.cancel(ErrTopicGone)
	}
	return err
}

// say sends html to a chat, logging what fails.
func (p *Parts) say(ctx context.Context, to telegram.Place, html string) {
	if _, err := p.TG.SendLong(ctx, to, 0, html, nil); err != nil {
		p.Logger.Error("send message", "chat", to, "err", err)
	}
}

// A Reply turns the events of one turn into Telegram messages: "typing"
// while it runs, one status message edited as tools run, a draft edited
// as the model streams (private chats), photos, and the final answer,
// question or approval.
//
// Streaming uses sendMessageDraft (Bot API 9.3+, private chats) where the
// server has it: an ephemeral preview that the final sendMessage replaces.
// Where it does not (older or local API servers answer 404), it falls back
// to throttled edits of a draft message, deleted when the final message is
// sent, so the answer always arrives as a new message with a notification.
type Reply struct {
	p *Parts
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
	typingOnce sync.Once
	// summed: the status message shows the turn's summary (see
	// summaryLocked).
	summed bool
}

// New starts the reply of the turn s describes; Finish ends it.
func (p *Parts) New(s Spec) *Reply {
	r := &Reply{p: p, base: s.Base, ctx: s.Ctx, cancel: s.Cancel, at: s.At, key: s.Key, user: s.User, replyTo: s.ReplyTo, private: s.At.Chat > 0, onFirst: s.OnFirst, stop: s.Stop}
	if s.Typing {
		r.stopTyping = make(chan struct{})
		r.typingDone = make(chan struct{})
		go r.typing()
	}
	return r
}

func (r *Reply) typing() {
	defer close(r.typingDone)
	t := time.NewTicker(r.p.TypingInterval)
	defer t.Stop()
	for {
		// One try only: a missed "typing" is not worth a delay.
		if err := r.gone(r.p.TG.Typing(r.at)); err != nil {
			r.p.Logger.Debug("sendChatAction", "chat", r.at, "err", err)
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

// Ended reports whether the turn's last word (an answer, a card, an
// error) went out.
func (r *Reply) Ended() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.done
}

// Finish stops "typing" and leaves the status message as a summary,
// unless the turn's last word did already.
func (r *Reply) Finish() {
	if r.stopTyping != nil {
		r.typingOnce.Do(func() { close(r.stopTyping) })
		<-r.typingDone
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.summaryLocked(r.base)
}

// endLocked readies the chat for the turn's last word: "typing" stops,
// the status message becomes the summary and the draft goes. Whatever
// the bot sends after the last word widens the moment in which a crash
// sends it twice (after it, only its update's done mark is written; see
// agent.Request.TurnID), so it goes before.
func (r *Reply) endLocked(ctx context.Context) {
	r.done = true
	if r.stopTyping != nil {
		r.typingOnce.Do(func() { close(r.stopTyping) })
	}
	r.summaryLocked(ctx)
	r.dropDraftLocked(ctx)
}

// summaryLocked leaves the status message as the turn's summary, once;
// its Stop button goes with this edit.
func (r *Reply) summaryLocked(ctx context.Context) {
	if r.summed || r.status == 0 || len(r.tools) == 0 {
		return
	}
	r.summed = true
	if err := r.p.TG.EditHTML(ctx, r.at.Chat, r.status, statusText(r.tools, true), nil); err != nil {
		r.p.Logger.Debug("final status edit", "err", err)
	}
}

// Emit shows ev, an event of the turn.
func (r *Reply) Emit(ev agent.Event) {
	if r.onFirst != nil {
		r.first.Do(r.onFirst)
	}
	if ev.Kind == agent.EventError && r.base.Err() != nil {
		// Shutting down: the update stays in the inbox and runs again.
		return
	}
	if errors.Is(context.Cause(r.ctx), ErrTopicGone) {
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
		r.tools = append(r.tools, toolLine{call: ev.Call, what: r.p.What(ev.Server, ev.Tool, ev.URI), mark: markRunning})
		r.statusLocked(ctx, statusText(r.tools, false))
	case agent.EventToolProgress:
		if r.progressLocked(ev.Progress) {
			r.statusLocked(ctx, statusText(r.tools, false))
		}
	case agent.EventToolEnd:
		r.toolEndLocked(ctx, ev)
	case agent.EventAnswer:
		r.endLocked(ctx)
		if _, _, err := r.p.SendBounded(ctx, r.at, r.replyTo, ev.Text, "answer", nil); r.gone(err) != nil {
			r.p.Logger.Error("send answer", "chat", r.at, "err", err)
		}
	case agent.EventQuestion:
		r.endLocked(ctx)
		if ev.Question != nil {
			r.p.Cards.Question(ctx, r.at, r.key, r.user, r.replyTo, ev.Question)
		}
	case agent.EventApproval:
		r.endLocked(ctx)
		if ev.Approval != nil {
			r.p.Cards.Approval(ctx, r.at, r.key, r.user, r.replyTo, ev.Approval)
		}
	case agent.EventNotice:
		r.p.say(ctx, r.at, render.Escape(ev.Text))
	case agent.EventForm:
		if ev.Form != nil {
			r.p.Forms.Show(ctx, r.at, r.key, r.user, ev.Form)
		}
	case agent.EventTask:
		if ev.Task != nil && r.p.Task != nil {
			r.p.Task(ctx, r.at, r.replyTo, ev.Task)
		}
	case agent.EventFormClosed:
		if ev.Form != nil {
			r.p.Forms.Update(ctx, r.at.Chat, 0, ev.Form)
		}
	case agent.EventError:
		r.endLocked(ctx)
		text := ev.Text
		if text == "" {
			text = "Sorry, something went wrong."
		}
		if _, err := r.p.TG.SendLong(ctx, r.at, r.replyTo, render.Escape(text), nil); err != nil {
			r.p.Logger.Error("send error message", "chat", r.at, "err", err)
		}
	}
}

// toolEndLocked shows a call's end: its status line, and what it
// returned to show the user (images, files, resource links).
func (r *Reply) toolEndLocked(ctx context.Context, ev agent.Event) {
	mark := "✅"
	if !ev.OK {
		mark = "⚠️"
	}
	if l := r.lineLocked(ev.Call); l != nil {
		l.mark, l.took, l.progress = mark, fmt.Sprintf(" · %.1fs", ev.Duration.Seconds()), ""
	}
	for i, img := range ev.Images {
		if err := r.gone(r.p.TG.SendPhoto(ctx, r.at, img.Data, img.MIMEType, fmt.Sprintf("%s · %s", ev.Tool, ev.Server), i)); err != nil {
			r.p.Logger.Error("send photo", "chat", r.at, "err", err)
			r.p.say(ctx, r.at, "(A tool returned an image that Telegram did not accept.)")
		}
	}
	for _, f := range ev.Files {
		if err := r.gone(r.p.TG.SendFile(ctx, r.at, 0, f.Data, render.FileName(f), fmt.Sprintf("%s · %s", ev.Tool, ev.Server))); err != nil {
			r.p.Logger.Error("send a file", "chat", r.at, "err", err)
			r.p.say(ctx, r.at, "(A tool returned a file that Telegram did not accept.)")
		}
	}
	r.p.Links.Show(ctx, r.at, r.key, r.user, ev.Server, ev.Tool, ev.Links)
	if r.p.Apps != nil && ev.OK && ev.Tool != "" {
		r.p.Apps.Show(ctx, apps.Call{At: r.at, Key: r.key, User: r.user, Server: ev.Server, Tool: ev.Tool,
			Arguments: ev.Arguments, Result: ev.Result})
	}
}

func (r *Reply) statusLocked(ctx context.Context, html string) {
	if html == r.statusHTML {
		return // Telegram refuses an edit that changes nothing
	}
	r.statusHTML = html
	markup := r.stopMarkup()
	if r.status != 0 {
		if err := r.p.TG.EditHTML(ctx, r.at.Chat, r.status, html, markup); err != nil {
			r.p.Logger.Debug("edit status", "err", err)
		}
		return
	}
	var send any
	if markup != nil {
		send = markup
	}
	m, err := r.p.TG.SendHTML(ctx, r.at, 0, html, send)
	if r.gone(err) != nil {
		r.p.Logger.Debug("send status", "err", err)
		return
	}
	r.status = m.MessageID
}

// streamLocked shows the model's text as it grows, at most one edit per
// StreamInterval, in private chats only (groups get only the final text).
func (r *Reply) streamLocked(ctx context.Context, text string) {
	if !r.private {
		return
	}
	// No draft for text that comes and goes within one interval (a line
	// before a tool call, a short answer): it would only flicker.
	if r.firstText.IsZero() {
		r.firstText = time.Now()
	}
	if time.Since(r.firstText) < r.p.StreamInterval || time.Since(r.lastDraft) < r.p.StreamInterval {
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
	if r.p.TG.SendDraft(r.at, r.draftID, html) {
		return
	}
	if r.draft != 0 {
		if err := r.p.TG.EditHTML(ctx, r.at.Chat, r.draft, html, nil); err != nil {
			r.p.Logger.Debug("edit draft", "err", err)
		}
		return
	}
	m, err := r.p.TG.SendHTML(ctx, r.at, 0, html, nil)
	if r.gone(err) != nil {
		r.p.Logger.Debug("send draft", "err", err)
		return
	}
	r.draft = m.MessageID
}

// Abandon ends a reply that will not be given now (its turn runs again
// later): its draft goes.
func (r *Reply) Abandon() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dropDraftLocked(r.base)
}

func (r *Reply) dropDraftLocked(ctx context.Context) {
	if r.draft == 0 {
		return
	}
	if _, err := r.p.TG.Request(ctx, tgbotapi.NewDeleteMessage(r.at.Chat, r.draft)); err != nil {
		r.p.Logger.Debug("delete draft", "err", err)
	}
	r.draft, r.draftHTML = 0, ""
}
