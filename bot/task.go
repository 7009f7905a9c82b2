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

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/agent"
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

// showTask tells the chat that a call became a task, and follows it.
func (b *Bot) showTask(ctx context.Context, at telegram.Place, replyTo int, t *agent.Task) {
	text := fmt.Sprintf("⏳ Working on it: %s on %s", render.Escape(t.Tool), render.Escape(t.Server))
	if t.StatusMessage != "" {
		text += "\n<i>" + render.Escape(t.StatusMessage) + "</i>"
	}
	text += "\nThe answer comes here when it is done; the chat is free meanwhile."
	if _, err := b.tg.SendLong(ctx, at, replyTo, text, nil); err != nil {
		b.logger.Error("send a task's card", "chat", at, "err", err)
	}
	if b.cfg.Tasks == nil {
		return
	}
	if err := b.cfg.Tasks.Follow(context.WithoutCancel(ctx), t.ID); err != nil {
		b.logger.Error("follow a task; it is followed from the next start", "task", t.ID, "err", err)
	}
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
