// Tasks: the tool calls servers run in the background (see package
// tasks). The bot runs the poller that follows them with its own
// lifecycle, shows each as it starts, and hands each one's end to its
// conversation by a turn of its own, in its chat and as a reply to the
// message that started it. The turn's write marks the task delivered, so
// it is delivered once; the store says which are still to deliver after
// a restart.

package bot

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/bot/callback"
	"github.com/mcpgram/mcpgram/bot/chats"
	"github.com/mcpgram/mcpgram/bot/render"
	"github.com/mcpgram/mcpgram/bot/reply"
	"github.com/mcpgram/mcpgram/bot/telegram"
	"github.com/mcpgram/mcpgram/store"
)

// A TaskPoller follows the tasks turns start until they end; *tasks.Poller
// is one, whose Finished the program points at Bot.TaskEnded.
type TaskPoller interface {
	Start()
	Close() error
	Follow(ctx context.Context, id int64) error
}

// showTask tells the chat that a call became a task, with a card whose
// status the poller's changes edit (TaskChanged), and follows it.
func (b *Bot) showTask(ctx context.Context, at telegram.Place, replyTo int, t *agent.Task) {
	text, markup := taskCard(t.ID, t.Tool, t.Server, t.StatusMessage)
	card, err := b.tg.SendLong(ctx, at, replyTo, text, markup)
	if err != nil {
		b.logger.Error("send a task's card", "chat", at, "err", err)
	}
	ctx = context.WithoutCancel(ctx)
	if err == nil {
		if err := b.store.SetTaskCard(ctx, t.ID, int64(card.MessageID)); err != nil {
			b.logger.Warn("keep a task's card; its status shows no changes", "task", t.ID, "err", err)
		}
	}
	if b.cfg.Tasks == nil {
		return
	}
	if err := b.cfg.Tasks.Follow(ctx, t.ID); err != nil {
		b.logger.Error("follow a task; it is followed from the next start", "task", t.ID, "err", err)
	}
}

// taskCard is the card of a running task: what runs, the server's word on
// it, and its Stop button.
func taskCard(id int64, tool, server, status string) (string, tgbotapi.InlineKeyboardMarkup) {
	text := fmt.Sprintf("⏳ Working on it: %s on %s", render.Escape(tool), render.Escape(server))
	if status != "" {
		text += "\n<i>" + render.Escape(status) + "</i>"
	}
	text += "\nThe answer comes here when it is done; the chat is free meanwhile."
	stop := callback.Data{Kind: callback.TaskStop, Task: id}.String()
	return text, tgbotapi.NewInlineKeyboardMarkup(tgbotapi.NewInlineKeyboardRow(tgbotapi.NewInlineKeyboardButtonData("⏹ Stop", stop)))
}

// TaskChanged shows the new status of task t, which the poller stored, on
// its card, as a job of the queue. Call it while Run runs.
func (b *Bot) TaskChanged(t store.Task) {
	if t.CardID == 0 {
		return
	}
	at, ok := chats.PlaceOf(t.ChatID)
	if !ok {
		return
	}
	b.queue.Go(func(work context.Context) {
		text, markup := taskCard(t.ID, t.Tool, t.Server, t.StatusMessage)
		if err := b.tg.EditHTML(work, at.Chat, int(t.CardID), text, &markup); err != nil {
			b.logger.Debug("edit a task's card", "task", t.ID, "err", err)
		}
	})
}

// TaskEnded hands the end of task t, which the poller stored, to its
// conversation, as a job of the queue (which Run's end waits for). Call
// it while Run runs.
func (b *Bot) TaskEnded(t store.Task) {
	b.queue.Go(func(work context.Context) { b.deliverTask(work, t) })
}

// deliverPending delivers the tasks that ended but were not delivered:
// those of the last run, which stopped in between.
func (b *Bot) deliverPending(work context.Context) {
	ts, err := b.store.UndeliveredTasks(work)
	if err != nil {
		b.logger.Error("read the tasks to deliver; they are delivered at the next start", "err", err)
		return
	}
	for _, t := range ts {
		b.deliverTask(work, t)
	}
}

// deliverTask runs the turn that hands t's end to its conversation,
// answered where t was started, as a reply to the message that started it.
func (b *Bot) deliverTask(work context.Context, t store.Task) {
	at, ok := chats.PlaceOf(t.ChatID)
	if !ok {
		b.logger.Error("a task's chat is not one the bot knows", "task", t.ID, "chat", t.ChatID)
		return
	}
	user, _ := strconv.ParseInt(t.UserID, 10, 64)
	r := b.replies.New(reply.Spec{Base: work, Ctx: work, At: at, Key: t.ChatID, User: user, ReplyTo: int(t.ReplyTo), Typing: true})
	req := agent.Request{Caller: mcpgram.Caller{UserID: t.UserID, ChatID: t.ChatID}, Task: t.ID, TurnID: fmt.Sprintf("task-%d", t.ID)}
	err := b.agent.Turn(work, req, r.Emit)
	r.Finish()
	if err != nil && !errors.Is(err, agent.ErrStale) && work.Err() == nil {
		b.logger.Error("deliver a task's end", "task", t.ID, "chat", at, "err", err)
	}
}

// Plain words of a task's Stop button.
const (
	msgTaskOver     = "This task is over."
	msgTaskNotYours = "Only the person who asked for it can stop it."
	msgTaskStopping = "Stopping it…"
	msgTaskRefused  = "The server did not stop it."
)

// handleTaskStop cancels the task of a Stop button pressed at place at,
// if the presser may: the user whose task it is, or an admin. The poller
// then finds it cancelled, and the chat is told as for any end.
func (b *Bot) handleTaskStop(ctx context.Context, cq *tgbotapi.CallbackQuery, at telegram.Place, data callback.Data) {
	t, err := b.store.GetTask(ctx, data.Task)
	if errors.Is(err, store.ErrNotFound) || (err == nil && !t.Open()) {
		b.tg.AnswerCallback(ctx, cq.ID, msgTaskOver, false)
		return
	}
	if err != nil {
		b.logger.Error("read a task to stop", "task", data.Task, "err", err)
		b.tg.AnswerCallback(ctx, cq.ID, msgTaskRefused, true)
		return
	}
	// The button's data is the presser's to forge: the task must be of
	// this chat, and the presser its user or an admin.
	if where, ok := chats.PlaceOf(t.ChatID); !ok || where.Chat != at.Chat {
		b.tg.AnswerCallback(ctx, cq.ID, "This button is no longer valid.", true)
		return
	}
	if strconv.FormatInt(cq.From.ID, 10) != t.UserID && !b.isAdmin(cq.From.ID) {
		b.tg.AnswerCallback(ctx, cq.ID, msgTaskNotYours, true)
		return
	}
	if _, err := b.hub.CancelTask(ctx, mcpgram.Caller{UserID: t.UserID, ChatID: t.ChatID}, t.Server, t.Handle); err != nil {
		b.logger.Warn("cancel a task", "task", t.ID, "server", t.Server, "err", err)
		b.tg.AnswerCallback(ctx, cq.ID, msgTaskRefused, true)
		return
	}
	b.logger.Info("task cancelled at a press", "task", t.ID, "server", t.Server, "by", cq.From.ID)
	b.tg.AnswerCallback(ctx, cq.ID, msgTaskStopping, false)
	// The task's card says so, wherever the button was pressed: a /tasks
	// list stays as it is, unless the task has no card kept.
	card := int(t.CardID)
	if card == 0 {
		card = cq.Message.MessageID
	}
	if err := b.tg.EditHTML(ctx, at.Chat, card, "⏹ <i>Stopping: "+render.Escape(t.Tool)+" on "+render.Escape(t.Server)+".</i>", nil); err != nil {
		b.logger.Debug("edit a task's card", "err", err)
	}
}
