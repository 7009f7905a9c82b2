package agent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/executor"
	"github.com/mcpgram/mcpgram/llm"
	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/toolcall"
)

// A Request starts a turn. Exactly one of Text, Answer, Decision, Retry
// and Task is set.
type Request struct {
	// Caller is who sent the message or pressed the button, and where.
	Caller mcpgram.Caller
	// Text is a typed message. When the chat has an open follow-up
	// question from the same user, it is the answer; when it has an open
	// approval request, that request is denied and the conversation moves
	// on with the new message.
	Text string
	// Answer is a pressed option of a follow-up question.
	Answer *Answer
	// Decision is a pressed approval button.
	Decision *Decision
	// Images go with Text to a model that sees them (its profile's
	// Vision), as image parts of the message. They are kept by reference with the
	// stored message (see Store.MediaPut), so later calls and turns send them
	// again while they fit the context budget.
	Images []llm.Image
	// Retry answers the chat's last message again (/retry): the earlier
	// answer is replaced, and a call it made runs again only once the
	// user approves it.
	Retry bool
	// Task hands the outcome of that finished task (store.Task) to its
	// conversation, and the model carries on from it: Caller is the
	// task's user and chat. A task delivered already, or not finished,
	// gives ErrStale with no events.
	Task int64
	// Exempt skips the daily token budget (admins).
	Exempt bool
	// TurnID ties the turn's log lines together; "" gets a new one. A
	// typed message is stored with it: the same request run again with
	// the same id (its update, which a crash left not marked done) is
	// the same turn, carried on from what it stored (see rerun), so
	// that no call is made twice and an answer given is given again, not
	// asked of the model anew.
	TurnID string
	// ReplyTo is the front end's id of the message the turn answers, kept
	// with a task the turn starts, for the answer its result brings.
	ReplyTo int64

	// overBudget: the user is over the day's budget, and the request is
	// let run as the end of the one that crossed it.
	overBudget bool
}

// An Answer is the press of one option of a follow-up question.
type Answer struct {
	PendingID int64
	// Option is the index into Question.Options.
	Option int
}

// A Decision is the press of an approval button.
type Decision struct {
	PendingID int64
	Approve   bool
	// Always also adds the tool to its server's autoApprove list. The
	// front end lets only admins press it.
	Always bool
}

// User-facing sentences of terminal events.
const (
	msgStopped = "Stopped."
	// msgApprovalWaiting answers a message in a group while another
	// member's tool approval is open.
	msgApprovalWaiting = "A tool is waiting for approval from the person who asked for it. Send your message again once they have answered (or after it expires)."
	msgInternal        = "Something went wrong on our side; please try again."
	msgStruggling      = "The model is struggling to use the tools correctly (%d invalid calls in a row), so I stopped. Try rephrasing your request, or send /reset."
	// noteCancelled ends a stopped turn in the history, as the
	// assistant's: the request it answers is closed, and the next message
	// reads as a request of its own, not as more of the stopped one.
	noteCancelled = "[This request was stopped before it finished (cancelled by the user, or the bot restarted). It is closed: I do not carry it on unless asked again.]"
)

// Turn runs one turn for req and reports it through emit, ending with
// exactly one of EventAnswer, EventQuestion, EventApproval or EventError.
// It returns nil when the turn ran to an answer, question or approval
// request; an error after emitting EventError (ctx's error when ctx was
// cancelled; ErrOverBudget, without calling the model, when the user has
// used up the day's tokens); and ErrNotYours or ErrStale, having emitted
// nothing, for a press that cannot be honoured. When the store cannot be
// reached (a database restarting, past the store's own retries), it
// returns an error wrapping store.ErrUnavailable without a terminal
// event: the request is to run again once the store is back, as after a
// crash (a call that ran is then "outcome unknown" to the model, not
// made again blindly). A Request without exactly
// one of Text, Answer and Decision is an error, with no events. emit is
// never called concurrently.
func (a *Agent) Turn(ctx context.Context, req Request, emit func(Event)) error {
	if n := btoi(req.Text != "") + btoi(req.Answer != nil) + btoi(req.Decision != nil) + btoi(req.Retry) + btoi(req.Task != 0); n != 1 {
		return fmt.Errorf("agent: a request needs exactly one of Text, Answer, Decision, Retry and Task, got %d", n)
	}
	if req.TurnID == "" {
		req.TurnID = NewTurnID()
	}
	ctx = withTurn(ctx, req.TurnID, req.Caller)
	if refused, err := a.refuseOverBudget(ctx, &req, emit); err != nil || refused {
		return cmp.Or(err, ErrOverBudget)
	}
	unlock, err := a.lock(ctx, req.Caller.ChatID)
	if err != nil {
		// Cancelled while the chat's previous turn was still running.
		a.newEmitter(ctx, req.TurnID, req.Caller, emit).end(Event{Kind: EventError, Text: msgStopped}, outcomeCancelled, "")
		return fmt.Errorf("turn: %w", err)
	}
	defer unlock()

	switch {
	case req.Answer != nil:
		return a.answer(ctx, req, emit)
	case req.Decision != nil:
		return a.decide(ctx, req, emit)
	}
	t, err := a.startTurn(ctx, req.Caller, 0, req.TurnID, emit)
	if err != nil {
		return t.fail(ctx, msgInternal, err)
	}
	t.overBudget, t.replyTo = req.overBudget, req.ReplyTo
	switch {
	case req.Retry:
		return t.retry(ctx)
	case req.Task != 0:
		return t.taskEnded(ctx, req.Task)
	}
	return t.message(ctx, req)
}

// message runs the turn of a typed message: it settles the chat's open
// question or approval first (an answer, a denial, or superseded), and
// tells the model of calls whose outcome a crash lost.
func (t *turn) message(ctx context.Context, req Request) error {
	a := t.a
	if i := requestOf(t.stored, req.TurnID); i >= 0 {
		if own := ownPart(t.stored, i, req.TurnID); len(own) < len(t.stored) {
			t.stored, t.history = own, visibleTo(own, req.Caller.UserID)
		}
		return t.rerun(ctx, i)
	}
	if len(req.Images) > 0 && !t.profile.Vision {
		t.emit.send(Event{Kind: EventNotice, Text: fmt.Sprintf(msgNoVision, t.profile.Name)})
	}
	user := req.Text
	p, err := store.Pending{}, store.ErrNotFound
	if t.pendingOpen {
		p, err = a.cfg.Store.OpenPending(ctx, req.Caller.ChatID)
	}
	switch {
	case errors.Is(err, store.ErrNotFound):
		if calls := unanswered(t.stored); len(calls) > 0 {
			// The bot stopped while these calls ran. The message that
			// started them, stored without its turn's id (requestOf), is
			// the one replayed now when its text is: its turn carries on.
			if n := len(t.stored); n >= 2 && t.stored[n-2].Role == RoleUser && t.stored[n-2].Content == user {
				return t.rerun(ctx, n-2)
			}
			// Another message: the model learns first that their outcome
			// is unknown, as whoever made them reads it.
			t.lostOutcomes(calls)
		}
	case err != nil:
		return t.fail(ctx, msgInternal, err)
	case p.Kind == store.KindQuestion && p.UserID == req.Caller.UserID:
		if err := a.cfg.Store.ResolvePending(ctx, p.ID, "answered", req.TurnID); err != nil && !errors.Is(err, store.ErrResolved) {
			return t.fail(ctx, msgInternal, err)
		}
		user = "<answer>" + req.Text + "</answer>"
	case p.Kind == store.KindApproval && p.UserID != req.Caller.UserID:
		// Only the user whose turn it is may settle an approval; someone
		// else in the group waits rather than deny it for them.
		t.emit.end(Event{Kind: EventError, Text: msgApprovalWaiting}, "", kindBusy)
		return nil
	case p.Kind == store.KindApproval:
		// The user moved on without deciding: the waiting calls are
		// denied, and the model learns it before reading the new message.
		b, err := decodeBatch(p)
		if err != nil {
			return t.fail(ctx, msgInternal, err)
		}
		if err := a.cfg.Store.ResolvePending(ctx, p.ID, "denied", req.TurnID); err != nil && !errors.Is(err, store.ErrResolved) {
			return t.fail(ctx, msgInternal, err)
		}
		for i := range b.Calls {
			if b.Calls[i].Waiting {
				t.deny(ctx, &b.Calls[i], "denied")
			}
		}
		// Stored with the new message, in one transaction.
		t.unsaved = append(t.unsaved, b.messages()...)
	default:
		// Someone else's question: the conversation moves on without it.
		if err := a.cfg.Store.ResolvePending(ctx, p.ID, "superseded", req.TurnID); err != nil && !errors.Is(err, store.ErrResolved) {
			return t.fail(ctx, msgInternal, err)
		}
	}
	refs, err := t.keepImages(ctx, req.Images)
	if err != nil {
		return t.fail(ctx, msgInternal, err)
	}
	t.unsaved = append(t.unsaved, store.Message{Role: RoleUser, Content: user, Media: refs, TurnID: req.TurnID})
	return t.loop(ctx)
}

// NoteUnknown follows, for the model, each call whose outcome was lost.
const NoteUnknown = "Outcome unknown: the bot stopped (a crash or a restart) while this call ran, so it may or may not have taken effect. Check before you do it again, if doing it twice would matter."

// unanswered returns the tool calls of the history's last message when it
// is a reply of the model whose calls have no outcome after it: the reply
// was stored before its calls ran, and the bot stopped before their
// outcome was. A reply waiting for an approval looks the same; the caller
// asks only when no approval is open.
func unanswered(history []store.Message) []toolcall.Block {
	if len(history) == 0 || history[len(history)-1].Role != RoleAssistant {
		return nil
	}
	return executor.Calls(toolcall.Parse(history[len(history)-1].Content))
}

// lostOutcomes tells the model, in the result format, that calls of the
// history's last reply may or may not have run: a message each, read by
// whoever read the reply.
func (t *turn) lostOutcomes(calls []toolcall.Block) {
	owner := t.stored[len(t.stored)-1].OnlyFor
	for _, b := range calls {
		target := b.Params["tool_name"]
		if b.Name == toolcall.AccessMCPResource {
			target = b.Params["uri"]
		}
		t.unsaved = append(t.unsaved, store.Message{
			Role: RoleTool, Content: executor.Header(b.Name, b.Params["server_name"], target, false) + "\n" + NoteUnknown, OnlyFor: owner,
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// A turn is the state of one running Turn.
type turn struct {
	a      *Agent
	caller mcpgram.Caller
	conv   int64
	// history is what the caller's turns read of the conversation (see
	// visibleTo); stored is all of it as stored when the turn started.
	history []store.Message
	stored  []store.Message
	// private: the turn's next messages are the caller's alone (see
	// markAudience).
	private bool
	emit    *emitter
	// toolCalls numbers the turn's tool calls (Event.Call).
	toolCalls atomic.Int32
	// logger carries the turn's id and chat on every line.
	logger *slog.Logger

	// unsaved holds messages the model reads but the store does not have
	// yet: the user's message and the model's reply wait to be stored with
	// the outcome of the reply's tool calls, in one transaction. Every
	// way out of a turn stores them (fail and cancelled too, so a failing
	// model loses nothing the user wrote); a crash in between loses them,
	// but the bot's inbox then runs the update again.
	unsaved []store.Message
	// audits are audit rows stored with the next messages; see runReady.
	audits []store.ToolCall
	// usage is the model calls' tokens, stored with the next messages.
	usage []store.Usage
	// modelCalls are the turn's model calls, recorded with its outcome
	// (for /stats) when it ends.
	modelCalls []store.ModelCall

	// instructions are what the chat asked with /system, added after the
	// shared prompt.
	instructions string
	// replaceFrom is the first message a retry replaces, written with the
	// turn's first write; repeats are the calls the replaced answer made,
	// which run again only once approved.
	replaceFrom int64
	repeats     map[string]bool
	// media caches the images of the turn's history by reference.
	media map[string]llm.Image
	// serversOff are the servers the chat turned off for itself: the turn
	// sees them as disabled (see catalog).
	serversOff []string
	// pendingOpen: the chat had an open question or approval when the
	// turn started (no other turn of the chat can open one meanwhile).
	pendingOpen bool
	// profile and model are the chat's, resolved once at the turn's
	// start.
	profile mcpgram.Profile
	model   Model
	// tools are the functions of the last native call.
	tools *toolset
	// search says the last call searched for its tools (see search.go):
	// recentRefs are then the chat's recent tools, read once (recentRead);
	// loaded the tools its searches found, which its native calls offer;
	// searches what each search found, recorded with the turn.
	search     bool
	recentRead bool
	recentRefs []mcpgram.ToolRef
	loaded     []mcpgram.ToolRef
	searches   []store.Search

	// overBudget: the turn runs over the user's daily budget, finishing
	// the request that crossed it; what it asks is marked so (see
	// Agent.overBudget).
	overBudget bool
	// replyTo is Request.ReplyTo, for the tasks the turn starts.
	replyTo int64
	// deliver is the task whose outcome the turn's next write hands to
	// the conversation (see store.TurnWrite.DeliverTask).
	deliver int64

	// callBuf is the slice model calls' messages are built in, one call
	// after the other (Model.Complete keeps none): a long conversation
	// sends a thousand messages and more a call, and a new slice of them
	// each time was most of what its turn allocated. A kept history
	// keeps it for the conversation's next turn.
	callBuf *[]llm.Message

	calls    int      // model calls made
	mistakes int      // replies with invalid calls, in a row
	done     []string // tools run, for the turn-limit message
}

// startTurn reads the history of conversation conv, or of the chat's
// active one when conv is 0. A chat without one has an empty history and
// gets its conversation with the turn's first write, so a turn takes the
// store's single writer only to store what it did.
func (a *Agent) startTurn(ctx context.Context, caller mcpgram.Caller, conv int64, id string, emit func(Event)) (*turn, error) {
	if id == "" {
		id = NewTurnID()
	}
	t := &turn{a: a, caller: caller, emit: a.newEmitter(ctx, id, caller, emit), logger: a.logger.With("turn", id, "chat", caller.ChatID)}
	t.emit.calls, t.emit.searches = &t.modelCalls, &t.searches
	st, err := a.cfg.Store.ChatState(ctx, caller.ChatID, a.chatOf(caller.ChatID))
	if err != nil {
		return t, err
	}
	t.instructions, t.serversOff, t.pendingOpen = st.Instructions, st.ServersOff, st.PendingOpen
	if err := t.resolveProfile(ctx, st.Profile); err != nil {
		return t, err
	}
	t.emit.record.Model = t.profile.Model // the chat's, for the record
	if st.FormsOpen {
		a.closeOrphanForms(ctx, caller.ChatID)
	}
	if conv == 0 {
		if conv = st.Conversation; conv == 0 {
			return t, nil
		}
	}
	t.conv = conv
	if t.stored, err = t.readHistory(ctx, conv); err != nil {
		return t, err
	}
	t.history = visibleTo(t.stored, caller.UserID)
	if n := len(t.stored); n > 0 {
		// The caller's stretch of per-user results goes on (see
		// markAudience): their turn after an approval, say.
		t.private = t.stored[n-1].OnlyFor == caller.UserID
	}
	return t, nil
}

// append stores msgs after any unsaved reply, with the waiting audit rows,
// in one transaction; the chat's first write starts its conversation.
func (t *turn) append(ctx context.Context, msgs ...store.Message) error {
	return t.write(ctx, nil, msgs)
}

// appendEnding is append for the turn's last write before it ends as
// outcome of kind: the record of how it ended goes in the same
// transaction, sparing a commit.
func (t *turn) appendEnding(ctx context.Context, outcome, kind string, msgs ...store.Message) error {
	return t.write(ctx, t.emit.ending(outcome, kind), msgs)
}

func (t *turn) write(ctx context.Context, ending *store.TurnRecord, msgs []store.Message) error {
	all := append(t.unsaved, msgs...)
	if len(all) == 0 && len(t.audits) == 0 && len(t.usage) == 0 {
		return nil // nothing to carry the record: end stores it alone
	}
	private := t.private
	t.markAudience(all)
	conv, err := t.a.cfg.Store.AppendTurn(ctx, store.TurnWrite{
		ChatID: t.caller.ChatID, ConversationID: t.conv, Messages: all, ToolCalls: t.audits, Usage: t.usage,
		ReplaceFrom: t.replaceFrom, Turn: ending, DeliverTask: t.deliver,
	})
	if err != nil {
		t.private = private // the next write marks the same messages again
		if t.deliver != 0 && errors.Is(err, store.ErrResolved) {
			return fmt.Errorf("deliver task %d: %w", t.deliver, errTaskDelivered)
		}
		return err
	}
	if ending != nil {
		t.emit.stored()
	}
	t.replaceFrom, t.deliver = 0, 0
	t.conv = conv
	t.history = append(t.history, visibleTo(all, t.caller.UserID)...)
	t.unsaved, t.audits, t.usage = nil, nil, nil
	return nil
}

// loop calls the model until the turn ends. The history ends with what the
// model has to read next: a user message or tool results.
func (t *turn) loop(ctx context.Context) error {
	if t.calls == 0 {
		t.awaitServers(ctx)
	}
	for {
		if ctx.Err() != nil {
			return t.cancelled(ctx)
		}
		if t.calls >= t.a.cfg.MaxTurns {
			return t.failAs(ctx, outcomeLimit, "", t.limitMessage(), fmt.Errorf("turn limit of %d model calls reached", t.a.cfg.MaxTurns))
		}
		t.calls++
		cat := t.catalog()
		resp, stored, reply, err := t.callModel(ctx, cat)
		if err != nil {
			return t.modelFailed(ctx, err)
		}
		t.unsaved = append(t.unsaved, store.Message{
			Role: RoleAssistant, Content: stored,
			PromptTokens: resp.Usage.PromptTokens, CompletionTokens: resp.Usage.CompletionTokens,
		})
		plan, cat := t.prepare(ctx, cat, reply)
		if len(resp.ToolCalls) > 0 && t.tools != nil {
			nativeFeedback(&plan, t.tools.set)
		}
		if perUser(cat, plan) {
			t.unsaved[len(t.unsaved)-1].OnlyFor = t.caller.UserID
		}
		t.countFormat(cat, reply, plan)
		if ended, err := t.act(ctx, plan, reply.Text); ended || err != nil {
			return err
		}
	}
}

// prepare decides what to do about reply. Calls to servers still starting
// or restarting (a bot that just started, a server that just crashed) wait
// for them, each up to its timeout, and are checked again against the
// tools the servers turn out to have. It returns the catalog the plan was
// checked against.
func (t *turn) prepare(ctx context.Context, cat mcpgram.Catalog, reply toolcall.Reply) (executor.Plan, mcpgram.Catalog) {
	opts := executor.PrepareOptions{ApproveAll: t.a.cfg.AutoApproveAll, Searching: t.search}
	plan := t.a.exec.PrepareWith(cat, reply, opts)
	if len(plan.Await) > 0 {
		t.logger.Info("a call waits for its server to start", "servers", plan.Await)
		for _, s := range plan.Await {
			// An error leaves the server as it is; the check says so.
			_ = t.a.cfg.Hub.WaitReady(ctx, s)
		}
		cat = t.catalog()
		plan = t.a.exec.PrepareWith(cat, reply, opts)
	}
	t.askForRepeats(plan)
	t.followSearches(plan)
	return plan, cat
}

// act does what plan says. ended reports that the turn ended (err is then
// what Turn returns); otherwise the model has the next word.
func (t *turn) act(ctx context.Context, plan executor.Plan, visible string) (ended bool, err error) {
	switch plan.Action {
	case executor.ActAnswer:
		return true, t.finish(ctx, plan.Answer)
	case executor.ActAsk:
		return true, t.ask(ctx, visible, *plan.Question)
	case executor.ActCorrect:
		err := t.mistake(ctx, plan.Feedback)
		return err != nil, err
	case executor.ActClarify:
		// Only examples: nothing runs, and the model says what it meant.
		// A well-formed reply is no mistake; MaxTurns bounds the asking.
		if err := t.append(ctx, store.Message{Role: RoleTool, Content: plan.Feedback}); err != nil {
			return true, t.fail(ctx, msgInternal, err)
		}
		return false, nil
	}
	if plan.Refused() {
		t.mistakes++
	} else {
		t.mistakes = 0
	}
	b := newBatch(plan)
	t.runSearches(b)
	b.OverBudget = t.overBudget
	if b.ready() {
		// Write-ahead: the reply with its calls is stored before any of
		// them runs, so that after a crash the model sees what it set
		// in motion (see unanswered) instead of doing it again blindly.
		if err := t.append(ctx); err != nil {
			return true, t.fail(ctx, msgInternal, err)
		}
	}
	t.runReady(ctx, b)
	if ended, err := t.settle(ctx, b, visible); ended || err != nil {
		return true, err
	}
	if t.mistakes >= MaxMistakes {
		return true, t.fail(ctx, fmt.Sprintf(msgStruggling, t.mistakes), fmt.Errorf("%d %w", t.mistakes, errMistakes))
	}
	return false, nil
}

// finish stores the reply and ends the turn with answer.
func (t *turn) finish(ctx context.Context, answer string) error {
	t.shareLast(answer)
	if err := t.appendEnding(ctx, "answer", ""); err != nil {
		return t.fail(ctx, msgInternal, err)
	}
	t.emit.send(Event{Kind: EventAnswer, Text: answer})
	return nil
}

// mistake tells the model what it got wrong and counts it.
func (t *turn) mistake(ctx context.Context, feedback string) error {
	t.mistakes++
	if err := t.append(ctx, store.Message{Role: RoleTool, Content: feedback}); err != nil {
		return t.fail(ctx, msgInternal, err)
	}
	if t.mistakes >= MaxMistakes {
		return t.fail(ctx, fmt.Sprintf(msgStruggling, t.mistakes), fmt.Errorf("%d %w", t.mistakes, errMistakes))
	}
	return nil
}

func (t *turn) limitMessage() string {
	var b strings.Builder
	fmt.Fprintf(&b, "I stopped after %d model calls without finishing.", t.a.cfg.MaxTurns)
	if len(t.done) > 0 {
		fmt.Fprintf(&b, " Done so far: %s.", strings.Join(t.done, ", "))
	}
	b.WriteString(" Send a message to let me continue.")
	return b.String()
}

// catalog is the hub's catalog as this chat's model sees it: without the
// tools whose visibility leaves the model out (MCP Apps' app-only tools,
// which are to the model as tools the server does not have), and with
// the servers the chat turned off for itself disabled, so the prompt
// leaves them out and the checks refuse calls to them.
func (t *turn) catalog() mcpgram.Catalog {
	cat := t.a.cfg.Hub.Catalog().For(mcpgram.AudienceModel)
	if len(t.serversOff) == 0 {
		return cat
	}
	servers := slices.Clone(cat.Servers)
	for i, s := range servers {
		if slices.Contains(t.serversOff, s.Name) {
			servers[i].Status, servers[i].Tools, servers[i].Resources, servers[i].ResourceTemplates = mcpgram.StatusDisabled, nil, nil, nil
		}
	}
	cat.Servers = servers
	return cat
}
