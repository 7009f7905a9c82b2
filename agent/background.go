// Calls in the background: a plain tool call (its server runs no task)
// still running BackgroundAfter after it started, the time it waited for
// its user not counted, stops keeping its turn waiting. It goes on in
// this process, kept in the store as a task (a Keeper takes it over), and
// the model is told its result comes later, as for a task; its end is
// delivered as a task's is.

package agent

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/executor"
	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/tasks"
	"github.com/mcpgram/mcpgram/toolcall"
)

// A Keeper takes over the calls that go on in the background, until they
// end (see tasks.Poller.Adopt); *tasks.Poller is one.
type Keeper interface {
	Adopt(ctx context.Context, t store.Task, cancel context.CancelCauseFunc, wait func() (*mcpgram.Result, error))
}

// CallInBackground is what the model reads of a call that went on in the
// background: answered for now, its result comes in a later message.
const CallInBackground = "This call is taking long, so it goes on in the background. Its result is not known yet: it will be given to you in a later message, once the call is over, and the user sees that it runs. Do not call it again for the same request; tell the user it is running, and go on with anything else."

// errTaskAfterAll is the end of a call in the background that its server
// made a task of after all, late: it is not followed.
var errTaskAfterAll = errors.New("the server made this call a background task of its own after the bot stopped waiting, and the bot could not follow it")

// A patience is how long a turn still waits for a call: it runs while the
// call runs, and stops while the call waits for its user (a form, a
// sign-in). Once out, it says so on out, again after each wait.
type patience struct {
	mu     sync.Mutex
	left   time.Duration
	since  time.Time // when it last started running
	paused int
	moved  bool // the call went on in the background
	timer  *time.Timer
	out    chan struct{}
}

func newPatience(d time.Duration) *patience {
	p := &patience{left: d, since: time.Now(), out: make(chan struct{}, 1)}
	p.timer = time.AfterFunc(d, func() {
		select {
		case p.out <- struct{}{}:
		default:
		}
	})
	return p
}

// hold stops p while the call waits for its user, until release. It
// reports false, stopping nothing, once the call went on in the
// background: nobody waits for an answer then. A nil p always holds.
func (p *patience) hold() bool {
	if p == nil {
		return true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.moved {
		return false
	}
	if p.paused++; p.paused == 1 {
		if p.timer.Stop() {
			p.left -= time.Since(p.since)
		} else {
			p.left = 0
		}
	}
	return true
}

// release ends a hold: p runs on for what it had left.
func (p *patience) release() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.paused--; p.paused == 0 {
		p.since = time.Now()
		p.timer.Reset(max(p.left, 0))
	}
}

// moveOn marks the call gone to the background, unless it waits for its
// user right now.
func (p *patience) moveOn() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.paused > 0 {
		return false
	}
	p.moved = true
	return true
}

// A running is a call that went on in the background: cancel cuts it
// short, done gives its outcome.
type running struct {
	cancel context.CancelCauseFunc
	done   chan executor.Outcome
	start  time.Time
}

// run runs call (the turn's n-th), its progress going to pump, as RunOne
// does, unless it runs out of the turn's patience (BackgroundAfter, with
// a Keeper): it then goes on in the background, and run returns it.
func (t *turn) run(ctx context.Context, caller mcpgram.Caller, call executor.Call, n int, pump *progressPump) (executor.Outcome, *running) {
	d := t.a.cfg.BackgroundAfter
	if d <= 0 || t.a.cfg.Keeper == nil || call.Name != toolcall.UseMCPTool {
		return t.a.exec.RunOne(withCallProgress(withAsker(ctx, t, nil), pump, n, call.Server, call.Tool), caller, call), nil
	}
	pat := newPatience(d)
	defer pat.timer.Stop()
	// The call's context outlives the turn's, which cancels it only while
	// the turn waits for it.
	callCtx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	detach := context.AfterFunc(ctx, func() { cancel(context.Cause(ctx)) })
	r := &running{cancel: cancel, done: make(chan executor.Outcome, 1), start: time.Now()}
	callCtx = withCallProgress(withAsker(callCtx, t, pat), pump, n, call.Server, call.Tool)
	go func() { r.done <- t.a.exec.RunOne(callCtx, caller, call) }()
	for {
		select {
		case o := <-r.done:
			detach()
			cancel(nil)
			return o, nil
		case <-pat.out:
		}
		if !pat.moveOn() {
			continue // it waits for its user: the patience stopped meanwhile
		}
		if !detach() {
			// The turn ended first (stopped, or the bot stops): the
			// call ends with it.
			o := <-r.done
			cancel(nil)
			return o, nil
		}
		return executor.Outcome{}, r
	}
}

// inBackground keeps call (the turn's n-th), gone on in the background as
// r, in the store as an in-process task, hands it to the Keeper and shows
// it; the model reads bc. It reports false, keeping nothing, where it
// cannot store it: the turn then waits for the call after all.
func (t *turn) inBackground(ctx context.Context, bc *batchCall, call executor.Call, n int, r *running) bool {
	now := t.a.cfg.Now()
	st := store.Task{
		Server: call.Server, Handle: tasks.LocalHandle(), Tool: call.Tool,
		ChatID: t.caller.ChatID, UserID: t.caller.UserID,
		TurnID: t.emit.record.TurnID, CallID: strconv.Itoa(n), ReplyTo: t.replyTo,
		Status: string(mcpgram.TaskWorking), NextPoll: now, CreatedAt: now,
	}
	var err error
	if st.ID, err = t.a.cfg.Store.PutTask(context.WithoutCancel(ctx), st); err != nil {
		t.logger.Error("keep a call going on in the background; waiting for it", "server", call.Server, "tool", call.Tool, "err", err)
		return false
	}
	t.logger.Info("call went on in the background", "server", call.Server, "tool", call.Tool, "task", st.ID)
	row := *bc
	t.a.cfg.Keeper.Adopt(ctx, st, r.cancel, func() (*mcpgram.Result, error) {
		o := <-r.done
		t.endedInBackground(ctx, row, o)
		if o.Err == nil && o.Task != nil {
			return nil, errTaskAfterAll
		}
		return o.Result, o.Err
	})
	t.a.cfg.Metrics.TaskStarted(call.Server)
	bc.Text, bc.OK = executor.Header(call.Name, call.Server, call.Tool, true)+"\n"+CallInBackground, true
	t.emit.send(Event{Kind: EventTask, Call: n, Server: call.Server, Tool: call.Tool,
		Task: &Task{ID: st.ID, Server: call.Server, Tool: call.Tool}})
	t.emit.send(Event{Kind: EventToolEnd, Call: n, Server: call.Server, Tool: call.Tool, Duration: time.Since(r.start), OK: true,
		Arguments: call.ArgumentsJSON})
	return true
}

// wait waits for r, the turn waiting again (its end cancels the call).
func (r *running) wait(ctx context.Context) executor.Outcome {
	stop := context.AfterFunc(ctx, func() { r.cancel(context.Cause(ctx)) })
	defer stop()
	return <-r.done
}

// endedInBackground audits and counts call bc once it ended as o, in the
// background: nothing of the turn that started it is left but its clock,
// user and logger.
func (t *turn) endedInBackground(ctx context.Context, bc batchCall, o executor.Outcome) {
	status := "ok"
	switch {
	case o.Err != nil && errors.Is(o.Err, context.Canceled):
		status = "cancelled"
	case !o.OK:
		status = "error"
	}
	measured := callStatus(o)
	t.countCall(bc.Name, bc.Server, bc.Tool, measured, &o)
	t.logger.Info("call in the background ended", "server", bc.Server, "tool", bc.Tool, "status", measured, "duration", o.Duration)
	t.audit(context.WithoutCancel(ctx), t.auditRow(bc, status, o.Duration, o.Bytes))
}
