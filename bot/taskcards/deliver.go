package taskcards

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/bot/chats"
	"github.com/mcpgram/mcpgram/bot/reply"
	"github.com/mcpgram/mcpgram/store"
)

// A Turner runs a turn of the agent; *agent.Agent is one.
type Turner interface {
	Turn(ctx context.Context, req agent.Request, emit func(agent.Event)) error
}

// A Delivery hands the end of a task to its conversation by a turn of its
// own, in its chat and as a reply to the message that started it. The
// turn's write marks the task delivered, so it is delivered once; the
// store says which are still to deliver after a restart.
type Delivery struct {
	Agent   Turner
	Replies *reply.Parts
	Store   Undelivered
	Logger  *slog.Logger
}

// An Undelivered lists the tasks whose end is still to hand to their
// conversations (see store.Tasks); *sqlite.DB and *postgres.DB are ones.
type Undelivered interface {
	UndeliveredTasks(ctx context.Context) ([]store.Task, error)
}

// Pending delivers the tasks that ended but were not delivered: those of
// the last run, which stopped in between.
func (d *Delivery) Pending(ctx context.Context) {
	ts, err := d.Store.UndeliveredTasks(ctx)
	if err != nil {
		d.Logger.Error("read the tasks to deliver; they are delivered at the next start", "err", err)
		return
	}
	for _, t := range ts {
		d.Deliver(ctx, t)
	}
}

// Deliver runs the turn that hands t's end to its conversation, answered
// where t was started, as a reply to the message that started it.
func (d *Delivery) Deliver(ctx context.Context, t store.Task) {
	at, ok := chats.PlaceOf(t.ChatID)
	if !ok {
		d.Logger.Error("a task's chat is not one the bot knows", "task", t.ID, "chat", t.ChatID)
		return
	}
	user, _ := strconv.ParseInt(t.UserID, 10, 64)
	r := d.Replies.New(reply.Spec{Base: ctx, Ctx: ctx, At: at, Key: t.ChatID, User: user, ReplyTo: int(t.ReplyTo), Typing: true})
	req := agent.Request{Caller: mcpgram.Caller{UserID: t.UserID, ChatID: t.ChatID}, Task: t.ID, TurnID: fmt.Sprintf("task-%d", t.ID)}
	err := d.Agent.Turn(ctx, req, r.Emit)
	r.Finish()
	if err != nil && !errors.Is(err, agent.ErrStale) && ctx.Err() == nil {
		d.Logger.Error("deliver a task's end", "task", t.ID, "chat", at, "err", err)
	}
}
