package taskcards

import (
	"context"
	"log/slog"
	"strconv"
	"sync"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/bot/chats"
	"github.com/mcpgram/mcpgram/bot/reply"
	"github.com/mcpgram/mcpgram/store"
)

// An Answerer gives a server what a task of its waits for, asking the
// task's user; *hub.Hub is one.
type Answerer interface {
	AnswerTask(ctx context.Context, caller mcpgram.Caller, server, tool, id string) error
}

// An Asker readies a context whose requests ask their questions through
// emit; *agent.Forms is one.
type Asker interface {
	Asking(ctx context.Context, caller mcpgram.Caller, emit func(agent.Event)) context.Context
}

// Inputs asks users what their tasks wait for (a task's input_required),
// on the same cards as any question a server asks mid-call, in the task's
// chat and to its user alone; one ask at a time for a task, closed when
// the task ends.
type Inputs struct {
	Hub     Answerer
	Forms   Asker
	Replies *reply.Parts
	Logger  *slog.Logger

	mu     sync.Mutex
	asking map[int64]context.CancelFunc
}

// Ask asks t's user what t waits for and gives the server the answers.
// The poller then finds the task working again, or ended.
func (in *Inputs) Ask(ctx context.Context, t store.Task) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if !in.begin(t.ID, cancel) {
		return
	}
	defer in.Stop(t.ID)
	at, ok := chats.PlaceOf(t.ChatID)
	if !ok {
		in.Logger.Error("a task's chat is not one the bot knows", "task", t.ID, "chat", t.ChatID)
		return
	}
	user, _ := strconv.ParseInt(t.UserID, 10, 64)
	r := in.Replies.New(reply.Spec{Base: ctx, Ctx: ctx, At: at, Key: t.ChatID, User: user, ReplyTo: int(t.ReplyTo)})
	defer r.Finish()
	caller := mcpgram.Caller{UserID: t.UserID, ChatID: t.ChatID}
	if err := in.Hub.AnswerTask(in.Forms.Asking(ctx, caller, r.Emit), caller, t.Server, t.Tool, t.Handle); err != nil && ctx.Err() == nil {
		in.Logger.Warn("answer what a task waits for", "task", t.ID, "server", t.Server, "err", err)
	}
}

// begin marks task id asked, to stop with cancel, unless it is already.
func (in *Inputs) begin(id int64, cancel context.CancelFunc) bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.asking[id] != nil {
		return false
	}
	if in.asking == nil {
		in.asking = map[int64]context.CancelFunc{}
	}
	in.asking[id] = cancel
	return true
}

// Stop closes what task id asks, if anything: the task ended (stopped,
// say), and its questions with it. The cards say so.
func (in *Inputs) Stop(id int64) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if cancel := in.asking[id]; cancel != nil {
		cancel()
		delete(in.asking, id)
	}
}
