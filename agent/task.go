// Tasks: a tool call its server runs in the background answers the model
// at once (see executor.TaskStarted), and is kept in the store with whom
// and what it was for, so that its result can reach the chat later.

package agent

import (
	"context"
	"strconv"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/executor"
	"github.com/mcpgram/mcpgram/store"
)

// msgTaskLost is the model's outcome of a call that became a task the bot
// could not keep: nobody will ask for its result.
const msgTaskLost = "The server started this call as a background task, but the bot could not keep track of it, so its result will not come. Tell the user it could not be followed."

// minTaskPoll is the soonest a task is asked about again.
const minTaskPoll = time.Second

// keepTask stores the task call (the turn's n-th) became, and shows it;
// a task it cannot store is told to the model as failed.
func (t *turn) keepTask(ctx context.Context, bc *batchCall, call executor.Call, n int, o executor.Outcome) {
	task := o.Task
	now := t.a.cfg.Now()
	st := store.Task{
		Server: call.Server, Handle: task.ID, Tool: call.Tool,
		ChatID: t.caller.ChatID, UserID: t.caller.UserID,
		TurnID: t.emit.record.TurnID, CallID: strconv.Itoa(n), ReplyTo: t.replyTo,
		Status: string(task.Status), StatusMessage: task.StatusMessage,
		NextPoll: now.Add(max(task.PollInterval, minTaskPoll)), Deadline: taskDeadline(task, now),
		CreatedAt: now,
	}
	id, err := t.a.cfg.Store.PutTask(context.WithoutCancel(ctx), st)
	if err != nil {
		t.logger.Error("keep a task", "server", call.Server, "tool", call.Tool, "err", err)
		bc.Text, bc.OK = executor.Header(call.Name, call.Server, call.Tool, false)+"\n"+msgTaskLost, false
		return
	}
	t.logger.Info("call became a task", "server", call.Server, "tool", call.Tool, "task", id)
	t.emit.send(Event{Kind: EventTask, Call: n, Server: call.Server, Tool: call.Tool,
		Task: &Task{ID: id, Server: call.Server, Tool: call.Tool, StatusMessage: task.StatusMessage}})
}

// taskDeadline is when a task stops being waited for: its server's ttl
// from its creation, zero for none.
func taskDeadline(task *mcpgram.Task, now time.Time) time.Time {
	if task.TTL <= 0 {
		return time.Time{}
	}
	created := task.CreatedAt
	if created.IsZero() || created.After(now) {
		created = now
	}
	return created.Add(task.TTL)
}
