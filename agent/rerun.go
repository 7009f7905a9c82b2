package agent

import (
	"context"
	"errors"

	"github.com/mcpgram/mcpgram/executor"
	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/toolcall"
)

// requestOf returns where history holds the request of turn id, when it
// is the history's last request and its turn did not end stopped: the
// turn ran before (its update was not marked done when the bot stopped)
// and nothing was asked since. It returns -1 otherwise, and for id "".
func requestOf(history []store.Message, id string) int {
	n := len(history)
	if id == "" || n == 0 || history[n-1].Content == noteCancelled {
		return -1
	}
	for i := n - 1; i >= 0; i-- {
		if history[i].Role == RoleUser {
			if history[i].TurnID == id {
				return i
			}
			return -1
		}
	}
	return -1
}

// ownPart returns history up to the first message a later turn wrote
// after the request of turn id at i: a task's delivery, a turn of its own
// that stores no request, may have run between the turn's end and its
// run again. What follows is not the turn's to carry on or send again.
func ownPart(history []store.Message, i int, id string) []store.Message {
	for j := i + 1; j < len(history); j++ {
		if history[j].TurnID != "" && history[j].TurnID != id {
			return history[:j]
		}
	}
	return history
}

// rerun carries on a turn run again, whose request is the stored
// message i (-1 for an approval's press, which stores none), from what
// it stored; nothing it did is done again:
//   - a question or approval it opened is shown again;
//   - a reply whose calls have no outcome: the model learns that their
//     outcome is unknown (the bot stopped while they ran), and goes on;
//   - a reply that answered: the answer is sent again, since whether it
//     reached the chat before the bot stopped is not known; a question
//     the bot stopped before opening is opened;
//   - the request, or results the model has not read: the model reads
//     them.
//
// A turn that ended stopped was cut short by a shutdown, to run again
// (a Stop ends the job, which marks its update done): it is not this
// function's; the caller runs the request as a new one.
func (t *turn) rerun(ctx context.Context, i int) error {
	t.logger.Info("the request ran before the bot stopped: its turn carries on from what it stored", "user", t.caller.UserID)
	if t.pendingOpen {
		p, err := t.a.cfg.Store.OpenPending(ctx, t.caller.ChatID)
		switch {
		case err == nil:
			// Opened by this turn: the request is the last one.
			ev, ok, err := pendingEvent(p)
			if err != nil {
				return t.fail(ctx, msgInternal, err)
			}
			if ok {
				t.emit.stored() // recorded when it was opened
				t.emit.send(ev)
				return nil
			}
		case !errors.Is(err, store.ErrNotFound):
			return t.fail(ctx, msgInternal, err)
		}
	}
	n := len(t.stored)
	if n == 0 || n-1 == i || t.stored[n-1].Role != RoleAssistant {
		return t.loop(ctx)
	}
	last := t.stored[n-1]
	reply := toolcall.Parse(last.Content)
	if calls := executor.Calls(reply); len(calls) > 0 {
		t.lostOutcomes(calls)
		return t.loop(ctx)
	}
	plan := t.a.exec.PrepareWith(t.catalog(), reply, executor.PrepareOptions{ApproveAll: t.a.cfg.AutoApproveAll})
	switch plan.Action {
	case executor.ActAnswer:
		t.emit.stored() // with the answer, in the same write
		t.emit.send(Event{Kind: EventAnswer, Text: plan.Answer})
		return nil
	case executor.ActAsk:
		return t.ask(ctx, reply.Text, *plan.Question)
	}
	return t.loop(ctx)
}
