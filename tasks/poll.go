package tasks

import (
	"context"
	"errors"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/store"
)

// Plain words for the ends the poller decides.
const (
	msgExpired = "The task ran past its time limit without finishing."
	msgLost    = "The server no longer knows this task (it restarted, or dropped it), so its result is lost."
)

// poll asks the server how e's task stands and acts on it: it reports
// whether to keep the entry, due again at e.due.
func (p *Poller) poll(ctx context.Context, e *entry) bool {
	t := e.task
	now := p.opts.Now()
	if p.opts.Holds != nil && !p.opts.Holds(t.ChatID) {
		// Another instance holds the chat, and polls it.
		e.due = now.Add(p.opts.MaxInterval)
		return true
	}
	if Local(t) {
		return p.pollLocal(ctx, e)
	}
	if !t.Deadline.IsZero() && !now.Before(t.Deadline) {
		return p.finish(ctx, e, newOutcome(EndExpired, msgExpired, false))
	}
	p.polls.Add(1)
	got, err := p.hub.GetTask(ctx, caller(t), t.Server, t.Handle)
	switch {
	case errors.Is(err, mcpgram.ErrTaskUnknown):
		return p.finish(ctx, e, newOutcome(EndLost, msgLost, false))
	case err != nil:
		return p.retry(ctx, e, now, "ask how a task stands", err)
	case got.Status.Final():
		return p.end(ctx, e, got)
	}
	base := min(max(got.PollInterval, p.opts.MinInterval), p.opts.MaxInterval)
	changed := string(got.Status) != t.Status || got.StatusMessage != t.StatusMessage
	if changed {
		e.interval = base
	} else {
		e.interval = min(max(e.interval*3/2, base), p.opts.MaxInterval)
	}
	e.due = now.Add(e.interval)
	if !changed {
		return true
	}
	err = p.st.UpdateTask(ctx, t.ID, string(got.Status), got.StatusMessage, e.due)
	switch {
	case errors.Is(err, store.ErrResolved), errors.Is(err, store.ErrNotFound):
		return false // ended elsewhere
	case err != nil:
		// The next poll sees the change again, and stores it then.
		p.log.Warn("store a task's status", "task", t.ID, "err", err)
		return true
	}
	e.task.Status, e.task.StatusMessage, e.task.NextPoll = string(got.Status), got.StatusMessage, e.due
	if p.opts.Changed != nil {
		p.opts.Changed(e.task)
	}
	return true
}

// end collects what a task that ended left: the result of a completed
// one, the server's word on a failed or cancelled one.
func (p *Poller) end(ctx context.Context, e *entry, got *mcpgram.Task) bool {
	t := e.task
	switch got.Status {
	case mcpgram.TaskCompleted:
		res, err := p.hub.TaskResult(ctx, caller(t), t.Server, t.Handle)
		switch {
		case errors.Is(err, mcpgram.ErrTaskUnknown):
			return p.finish(ctx, e, newOutcome(EndLost, msgLost, false))
		case err != nil:
			return p.retry(ctx, e, p.opts.Now(), "fetch a task's result", err)
		}
		return p.finish(ctx, e, newOutcome(EndCompleted, res.Text(), res.IsError))
	case mcpgram.TaskFailed:
		return p.finish(ctx, e, newOutcome(EndFailed, got.StatusMessage, true))
	default:
		return p.finish(ctx, e, newOutcome(EndCancelled, got.StatusMessage, false))
	}
}

// finish stores how e's task ended, once: a task another poller finished
// first is dropped without a word.
func (p *Poller) finish(ctx context.Context, e *entry, o Outcome) bool {
	t := e.task
	err := p.st.FinishTask(ctx, t.ID, o.End, statusLine(o), o.encode())
	switch {
	case errors.Is(err, store.ErrResolved), errors.Is(err, store.ErrNotFound):
		return false
	case err != nil:
		return p.retry(ctx, e, p.opts.Now(), "store how a task ended", err)
	}
	p.log.Info("task ended", "task", t.ID, "server", t.Server, "tool", t.Tool, "end", o.End)
	p.opts.Metrics.TaskFinished(t.Server, o.End, p.opts.Now().Sub(t.CreatedAt))
	t.Status, t.StatusMessage, t.Outcome = o.End, statusLine(o), o.encode()
	if p.opts.Finished != nil {
		p.opts.Finished(t, o)
	}
	return false
}

// retry keeps e, due again after a back-off, when a request or a write
// failed; nothing is kept once the poller closes.
func (p *Poller) retry(ctx context.Context, e *entry, now time.Time, what string, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	e.interval = min(max(2*e.interval, p.opts.MinInterval), p.opts.MaxInterval)
	e.due = now.Add(e.interval)
	p.log.Warn(what+"; trying again", "task", e.task.ID, "server", e.task.Server, "in", e.interval, "err", err)
	return true
}

// statusLine is the status message stored with an ended task: the
// server's for a result, the outcome's text otherwise, on one bounded
// line.
func statusLine(o Outcome) string {
	if o.End == EndCompleted {
		return ""
	}
	s := []rune(o.Text)
	if len(s) > 300 {
		s = append(s[:300], '…')
	}
	return string(s)
}

// caller is whom a task's requests are made for: the user who started it,
// whose account and sign-in they use.
func caller(t store.Task) mcpgram.Caller {
	return mcpgram.Caller{UserID: t.UserID, ChatID: t.ChatID}
}
