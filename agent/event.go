package agent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/metrics"
	"github.com/mcpgram/mcpgram/store"
)

// An EventKind says what an Event reports.
type EventKind int

// The kinds of event a turn emits, in the order a front end usually sees them.
const (
	// EventText carries, in Text, the visible text of the model reply being
	// streamed so far (the whole of it, not a delta; tool XML and thinking
	// removed). A new model call starts again from empty.
	EventText EventKind = iota + 1
	// EventToolStart: Server and Tool are about to be called (or URI read).
	EventToolStart
	// EventToolEnd: the call finished after Duration; OK is false on any
	// error, and Text then holds a one-line reason. Images holds image
	// parts of the result, for sending as photos, and Files its blobs and
	// audio, for sending as documents; Links its resource links, for the
	// user to open.
	EventToolEnd
	// EventQuestion: the model asked a follow-up question; the turn ends.
	// Text is the visible text the model wrote before asking, if any.
	EventQuestion
	// EventApproval: a tool needs the user's approval; the turn ends.
	// Text is the visible text the model wrote before the call, if any.
	EventApproval
	// EventAnswer: the final answer, Markdown in Text; the turn ends.
	EventAnswer
	// EventError: the turn failed or stopped; Text is a short plain sentence
	// for the user (details are logged). The turn ends.
	EventError
	// EventNotice: a short plain sentence for the user about how this
	// turn is answered (the chat's model was removed from the
	// configuration; its model cannot see the photo sent). The turn goes
	// on.
	EventNotice
	// EventForm: a tool call (Server, Tool or URI) asks the user what Form
	// says; the call, and the turn, wait for the answer, given through
	// Agent.FormInput. May come from several calls at once.
	EventForm
	// EventFormClosed: a form closed without the user's last input: it
	// expired, or its call ended first (Form.Outcome says which). The
	// turn goes on.
	EventFormClosed
	// EventToolProgress: running calls reported progress; Progress holds
	// each one's latest report (by its Call number), at most one event
	// per Config.ProgressInterval however fast servers report. A call
	// that reports nothing has none.
	EventToolProgress
	// EventTask: a tool call (Server, Tool) became a task its server runs
	// in the background (Task says which, as stored); the model was told
	// its result comes later, and the turn goes on. A front end shows it,
	// with a way to stop it.
	EventTask
)

// An Event is something a running turn reports to the front end.
type Event struct {
	Kind EventKind
	// Call numbers the turn's tool calls from 1, in EventToolStart,
	// EventToolEnd and Progress: calls run in parallel end in any order.
	Call     int
	Text     string
	Server   string
	Tool     string
	URI      string
	Duration time.Duration
	OK       bool
	Images   []mcpgram.Content
	Files    []mcpgram.Content // blobs and audio a tool returned, for the user to open
	Links    []mcpgram.Content // resource links a tool returned (URI, Name, MIMEType)
	// Arguments and Result, in EventToolEnd, are the call's JSON
	// arguments and what it returned (nil if nothing): what a front end
	// hands the tool's MCP App, when it has one.
	Arguments string
	Result    *mcpgram.Result
	Question  *Question
	Approval  *Approval
	Form      *Form
	// Err, on an EventError, is the failure behind Text, for a front end
	// whose user is the operator (the terminal chat): an *llm.Error says
	// what the endpoint answered (see llm.Error.Diagnosis). Its text may
	// name URLs and servers, so it is not for every user; nil when the
	// turn was stopped.
	Err      error
	Progress []CallProgress
	Task     *Task
}

// A Task is a tool call its server runs in the background, as a turn
// started it: the store keeps it (store.Task), by ID.
type Task struct {
	ID     int64
	Server string
	Tool   string
	// StatusMessage is the server's word on it, bounded, untrusted.
	StatusMessage string
}

// A Question is a follow-up question waiting for the user's answer.
type Question struct {
	// PendingID identifies the stored question; button presses carry it.
	PendingID int64
	Text      string
	Options   []string
}

// An Approval is a tool call or a resource read waiting for the user's
// approval.
type Approval struct {
	PendingID int64
	Server    string
	// Tool is the tool to call; "" for a resource read, whose URI is set.
	Tool string
	URI  string
	// Arguments is the call's JSON arguments as the model wrote them.
	Arguments string
	ExpiresAt time.Time
	// Consent is set when the call needs the user's own consent: it is
	// approved once, never always.
	Consent bool
}

// An emitter keeps the promise of one terminal event and no concurrent
// calls, whatever path a turn takes; it counts and records the turn's
// outcome with the terminal event.
type emitter struct {
	mu      sync.Mutex
	fn      func(Event)
	metrics *metrics.Metrics
	ended   bool

	// record stores the outcome, with the model calls of calls (nil: the
	// turn made none); ctx is the turn's. recorded says the turn's last
	// write stored it already (see ending). calls is read only when the
	// turn ends, on the turn's goroutine, the one that appends to it.
	a        *Agent
	ctx      context.Context
	record   store.TurnRecord
	calls    *[]store.ModelCall
	searches *[]store.Search
	recorded bool
}

func (a *Agent) newEmitter(ctx context.Context, turnID string, caller mcpgram.Caller, fn func(Event)) *emitter {
	return &emitter{fn: fn, metrics: a.cfg.Metrics, a: a, ctx: ctx,
		record: store.TurnRecord{TurnID: turnID, UserID: caller.UserID, ChatID: caller.ChatID}}
}

func (e *emitter) send(ev Event) { e.end(ev, "", "") }

// end sends ev, counting and recording the turn's outcome as outcome when
// ev ends it ("": as ev's kind says), an error narrowed by kind. The
// record is stored before ev goes out, so that whoever reads the
// statistics after seeing the turn end finds it there.
func (e *emitter) end(ev Event, outcome, kind string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ended {
		return
	}
	switch ev.Kind {
	case EventAnswer, EventQuestion, EventApproval, EventError:
		e.ended = true
		if outcome == "" {
			outcome = outcomeOf(ev)
		}
		e.metrics.Turn(outcome)
		if !e.recorded {
			e.store(outcome, kind)
		}
	}
	if e.fn != nil {
		e.fn(ev)
	}
}

// ending returns the record of the turn ending as outcome of kind, for
// its last write to store, or nil once the turn has ended. The caller ends
// the turn with the same outcome right after the write, and calls
// stored once it went in.
func (e *emitter) ending(outcome, kind string) *store.TurnRecord {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ended || e.recorded {
		return nil
	}
	r := e.outcome(outcome, kind)
	return &r
}

// outcome is the turn's record as it ends with outcome of kind.
func (e *emitter) outcome(outcome, kind string) store.TurnRecord {
	r := e.record
	r.Outcome, r.Kind, r.At = outcome, kind, e.a.cfg.Now()
	if e.calls != nil {
		r.Calls = slices.Clone(*e.calls)
	}
	if e.searches != nil {
		r.Searches = slices.Clone(*e.searches)
	}
	return r
}

func (e *emitter) stored() {
	e.mu.Lock()
	e.recorded = true
	e.mu.Unlock()
}

// store records the turn's outcome: one small insert, for the ways out of
// a turn that do not end on a write of their own. A failure is logged;
// the turn's own work is stored already.
func (e *emitter) store(outcome, kind string) {
	r := e.outcome(outcome, kind)
	if err := e.a.cfg.Store.RecordTurn(context.WithoutCancel(e.ctx), r); err != nil {
		e.a.logger.Error("record the turn's outcome", "turn", r.TurnID, "chat", r.ChatID, "err", err)
	}
}

func (t *turn) fail(ctx context.Context, userText string, err error) error {
	return t.failAs(ctx, "", errorKind(err), userText, err)
}

// failAs is fail counting the turn's outcome as outcome ("": error) of
// kind.
func (t *turn) failAs(ctx context.Context, outcome, kind, userText string, err error) error {
	if errors.Is(err, errTaskDelivered) {
		// Another turn (another instance's, on a shared database) handed
		// the task's end to the conversation first: it told the user, so
		// this one ends without a word, as a stale press does.
		t.logger.Debug("the task was delivered already; this delivery ends silently", "err", err)
		return err
	}
	if ctx.Err() != nil {
		return t.cancelled(ctx)
	}
	if errors.Is(err, store.ErrUnavailable) {
		// The database is away, not the request wrong: it is to run
		// again once the database is back, and ends here without a word
		// to the user (see Turn). What it did not store is done again.
		t.logger.Warn("the database is unavailable; the request is to run again", "user", t.caller.UserID, "err", err)
		return err
	}
	t.logger.Error("turn failed", "user", t.caller.UserID, "err", err)
	if err := t.appendEnding(context.WithoutCancel(ctx), cmp.Or(outcome, "error"), kind); err != nil {
		t.logger.Error("store the failed turn's messages", "err", err)
	}
	t.emit.end(Event{Kind: EventError, Text: userText, Err: err}, outcome, kind)
	return err
}

// cancelled records that the user stopped the turn, so the model does not
// carry on with the abandoned request next time. The note is the
// assistant's reply: as a result (a user message to the model) it would
// be joined with the user's next message, and the model would read the
// stopped request and the new one as one.
func (t *turn) cancelled(ctx context.Context) error {
	if t.conv != 0 || len(t.unsaved) > 0 {
		if err := t.appendEnding(context.WithoutCancel(ctx), outcomeCancelled, "", store.Message{Role: RoleAssistant, Content: noteCancelled}); err != nil {
			t.logger.Error("record cancel", "err", err)
		}
	}
	t.emit.end(Event{Kind: EventError, Text: msgStopped}, outcomeCancelled, "")
	return fmt.Errorf("turn: %w", context.Cause(ctx))
}
