// Tasks: a tool call its server runs in the background answers the model
// at once (see executor.TaskStarted), and is kept in the store with whom
// and what it was for, so that its result can reach the chat later.

package agent

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/executor"
	"github.com/mcpgram/mcpgram/internal/lines"
	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/tasks"
	"github.com/mcpgram/mcpgram/toolcall"
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
	t.a.cfg.Metrics.TaskStarted(call.Server)
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

// What the model reads of how a task ended, after the result header of
// its call.
const (
	noteTaskDone      = "The background task of this call is done. Its result:"
	noteTaskFailed    = "The background task of this call failed."
	noteTaskCancelled = "The background task of this call was cancelled."
	noteTaskExpired   = "The background task of this call ran past its time limit without finishing, so it was given up."
	noteTaskLost      = "The server no longer knows the background task of this call (it restarted, or dropped it): its result is lost."
	noteInterrupted   = "The bot stopped or restarted while this call ran in the background, which cut it short: its result is lost."
	noteTaskTell      = "Tell the user, in plain words, what came of the request that started it."
)

// errTaskDelivered: the write of a delivery turn found its task delivered
// by another turn since the turn read it (see taskEnded).
var errTaskDelivered = fmt.Errorf("the task was delivered already: %w", ErrStale)

// taskEnded hands the outcome of finished task id to the conversation, in
// the result format of the call that started it, and lets the model carry
// on from it. The write that stores it marks the task delivered, once: a
// task delivered already (by another instance, or before a crash) gives
// ErrStale, with no event, whether the turn finds it so at its start or
// at its first write (another instance's turn delivered it meanwhile).
func (t *turn) taskEnded(ctx context.Context, id int64) error {
	task, err := t.a.cfg.Store.GetTask(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("deliver task %d: %w", id, ErrStale)
	case err != nil:
		return t.fail(ctx, msgInternal, err)
	case task.Open() || task.Delivered():
		return fmt.Errorf("deliver task %d: %w", id, ErrStale)
	case task.ChatID != t.caller.ChatID || task.UserID != t.caller.UserID:
		return fmt.Errorf("deliver task %d: %w", id, ErrNotYours)
	}
	o, err := tasks.DecodeOutcome(task.Outcome)
	if err != nil {
		return t.fail(ctx, msgInternal, err)
	}
	ok := o.End == tasks.EndCompleted && !o.IsError
	var b strings.Builder
	b.WriteString(executor.Header(toolcall.UseMCPTool, task.Server, task.Tool, ok))
	b.WriteByte('\n')
	b.WriteString(taskNote(o.End))
	if text := strings.TrimSpace(o.Text); text != "" && (o.End == tasks.EndCompleted || o.End == tasks.EndFailed) {
		fence := lines.Fence(text)
		fmt.Fprintf(&b, "\n%s\n%s\n%s", fence, text, fence)
		if o.Cut > 0 {
			fmt.Fprintf(&b, "\n(Output cut: %d more bytes were not shown.)", o.Cut)
		}
	}
	b.WriteString("\n" + noteTaskTell)
	t.unsaved = append(t.unsaved, store.Message{Role: RoleTool, Content: b.String(), TurnID: t.emit.record.TurnID})
	t.deliver = task.ID
	return t.loop(ctx)
}

// taskNote is what the model reads of a task that ended as end says.
func taskNote(end string) string {
	switch end {
	case tasks.EndCompleted:
		return noteTaskDone
	case tasks.EndFailed:
		return noteTaskFailed
	case tasks.EndCancelled:
		return noteTaskCancelled
	case tasks.EndExpired:
		return noteTaskExpired
	case tasks.EndInterrupted:
		return noteInterrupted
	}
	return noteTaskLost
}
