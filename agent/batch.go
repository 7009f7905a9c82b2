// Batches: the tool calls of one reply, from their check to their
// outcomes: running them, auditing them, and handing the outcomes back.

package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/executor"
	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/toolcall"
)

// A batch is the tool calls of one model reply. While one of them waits
// for approval the batch is the pending's payload, so the calls already run
// keep their results across the wait (and a restart) and all results reach
// the model together, in the order written.
type batch struct {
	Calls []batchCall `json:"calls"`
	// Feedback on blocks that were not acted on, sent after the results.
	Feedback string `json:"feedback,omitempty"`
	// OverBudget: the reply was written by a turn that ran over the
	// user's daily budget (see Agent.overBudget).
	OverBudget bool `json:"over_budget,omitempty"`
}

type batchCall struct {
	Name      string `json:"name"`
	Server    string `json:"server,omitempty"`
	Tool      string `json:"tool,omitempty"`
	URI       string `json:"uri,omitempty"`
	Arguments string `json:"arguments,omitempty"`
	// Query is a search's (search_tools).
	Query string `json:"query,omitempty"`
	// Waiting: the call needs an approval not yet given.
	Waiting bool `json:"waiting,omitempty"`
	// Consent: the call needs the user's own consent, so no "always"
	// covers it. Approved: the user approved this very call on its card,
	// which the server is told (mcpgram.Caller.Consent).
	Consent  bool `json:"consent,omitempty"`
	Approved bool `json:"approved,omitempty"`
	// Text is the outcome for the model once the call ran, was refused or
	// failed its check; "" while it is still to run.
	Text string `json:"text,omitempty"`
	// OK: the call ran and succeeded.
	OK bool `json:"ok,omitempty"`

	call *executor.Call // the checked call, when still in memory
}

func (bc *batchCall) toCall() (executor.Call, error) {
	if bc.call != nil {
		return *bc.call, nil
	}
	c := executor.Call{Name: bc.Name, Server: bc.Server, Tool: bc.Tool, URI: bc.URI, ArgumentsJSON: bc.Arguments, Query: bc.Query}
	if bc.Name == toolcall.UseMCPTool {
		c.Arguments = map[string]any{}
		if bc.Arguments != "" {
			d := json.NewDecoder(strings.NewReader(bc.Arguments))
			d.UseNumber()
			if err := d.Decode(&c.Arguments); err != nil {
				return c, fmt.Errorf("decode stored arguments of %s/%s: %w", bc.Server, bc.Tool, err)
			}
		}
	}
	return c, nil
}

// newBatch is the batch of a plan's steps: each checked call to run or
// approve, each refused one with its feedback as its outcome.
func newBatch(p executor.Plan) *batch {
	b := &batch{Feedback: p.Feedback}
	for _, s := range p.Steps {
		if s.Err != nil {
			b.Calls = append(b.Calls, batchCall{Name: s.Block.Name, Text: s.Feedback})
			continue
		}
		call := s.Call
		b.Calls = append(b.Calls, batchCall{
			Name: call.Name, Server: call.Server, Tool: call.Tool, URI: call.URI, Query: call.Query,
			Arguments: call.ArgumentsJSON, Waiting: s.Approve, Consent: s.Consent, call: &call,
		})
	}
	return b
}

func (b *batch) waiting() int {
	for i, c := range b.Calls {
		if c.Waiting {
			return i
		}
	}
	return -1
}

// ready reports whether a call of b is to run now.
func (b *batch) ready() bool {
	for _, c := range b.Calls {
		if c.Text == "" && !c.Waiting {
			return true
		}
	}
	return false
}

// messages give the model every outcome, in order, a message each (see
// native.go), then the feedback.
func (b *batch) messages() []store.Message {
	out := make([]store.Message, 0, len(b.Calls)+1)
	for _, c := range b.Calls {
		out = append(out, store.Message{Role: RoleTool, Content: c.Text})
	}
	if b.Feedback != "" {
		out = append(out, store.Message{Role: RoleTool, Content: b.Feedback})
	}
	return out
}

func decodeBatch(p store.Pending) (*batch, error) {
	var b batch
	if err := json.Unmarshal([]byte(p.Payload), &b); err != nil {
		return nil, fmt.Errorf("decode approval %d: %w", p.ID, err)
	}
	return &b, nil
}

// runReady runs, concurrently, the calls of b that are neither done nor
// waiting for approval.
//
// A call's audit row is written as soon as the call returns, so the log
// keeps a call that ran even if the turn dies before storing its outcome;
// except when it is the only call to run: the batch's outcome is then
// stored right away (see settle), and the row goes in that same
// transaction, one commit instead of two.
func (t *turn) runReady(ctx context.Context, b *batch) {
	ran := make([]bool, len(b.Calls))
	n := 0
	for i, bc := range b.Calls {
		if bc.Text == "" && !bc.Waiting {
			ran[i] = true
			n++
		}
	}
	pump := startProgress(t.emit, t.a.cfg.ProgressInterval)
	defer pump.close()
	if n == 1 {
		t.runOne(ctx, &b.Calls[slices.Index(ran, true)], true, pump)
	} else {
		limit := t.a.cfg.Executor.MaxParallel
		if limit <= 0 {
			limit = executor.DefaultMaxParallel
		}
		sem := make(chan struct{}, limit)
		var wg sync.WaitGroup
		for i := range b.Calls {
			if !ran[i] {
				continue
			}
			bc := &b.Calls[i]
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer func() { <-sem; wg.Done() }()
				t.runOne(ctx, bc, false, pump)
			}()
		}
		wg.Wait()
	}
	for i, c := range b.Calls {
		if ran[i] {
			t.done = append(t.done, describe(c)+" "+okWord(c.OK))
		}
	}
}

// callTarget is what a call's result header names: its tool, or the
// resource it reads.
func callTarget(c executor.Call) string {
	if c.Name == toolcall.AccessMCPResource {
		return c.URI
	}
	return c.Tool
}

func describe(c batchCall) string {
	if c.Name == toolcall.AccessMCPResource {
		return fmt.Sprintf("read %s on %s", c.URI, c.Server)
	}
	return fmt.Sprintf("%s on %s", c.Tool, c.Server)
}

func okWord(ok bool) string {
	if ok {
		return "(ok)"
	}
	return "(failed)"
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// runOne runs bc, its progress going to pump; with deferAudit, its
// audit row waits in t.audits for the turn's next write, which only the
// turn's own goroutine may do.
func (t *turn) runOne(ctx context.Context, bc *batchCall, deferAudit bool, pump *progressPump) {
	call, err := bc.toCall()
	if err != nil {
		target := bc.Tool
		if bc.Name == toolcall.AccessMCPResource {
			target = bc.URI
		}
		bc.Text = executor.Header(bc.Name, bc.Server, target, false) + "\n" + err.Error()
		return
	}
	if t.appOnly(call) {
		bc.Text = executor.Header(call.Name, call.Server, call.Tool, false) + "\n" + fmt.Sprintf("Server %q has no tool %q.", call.Server, call.Tool)
		return
	}
	n := int(t.toolCalls.Add(1))
	t.emit.send(Event{Kind: EventToolStart, Call: n, Server: call.Server, Tool: call.Tool, URI: call.URI})
	caller := t.caller
	caller.Consent = bc.Approved
	// What the server asks mid-call, it asks this turn's user (see Elicit).
	o, r := t.run(ctx, caller, call, n, pump)
	pump.callEnded(n)
	if r != nil {
		if t.inBackground(ctx, bc, call, n, r) {
			return
		}
		o = r.wait(ctx)
	}
	bc.Text, bc.OK = o.Text, o.OK
	if o.Task != nil {
		t.keepTask(ctx, bc, call, n, o)
	}
	status := "ok"
	switch {
	case o.Err != nil && ctx.Err() != nil:
		status = "cancelled"
		if errors.Is(context.Cause(ctx), ErrStopped) {
			// One outcome: a result that came first stands; a call
			// cut short is the user's doing, not a failure.
			bc.Text = executor.Header(call.Name, call.Server, callTarget(call), false) + "\n" + stoppedText
		}
	case !o.OK:
		status = "error"
	}
	measured := callStatus(o)
	t.countCall(call.Name, call.Server, call.Tool, measured, &o)
	if t.logger.Enabled(ctx, slog.LevelDebug) {
		t.logger.Debug("tool call", "server", call.Server, "tool", call.Tool, "uri", call.URI, "status", measured, "duration", o.Duration)
	}
	row := t.auditRow(*bc, status, o.Duration, o.Bytes)
	if deferAudit {
		t.audits = append(t.audits, row)
	} else {
		t.audit(ctx, row)
	}
	ev := Event{Kind: EventToolEnd, Call: n, Server: call.Server, Tool: call.Tool, URI: call.URI, Duration: o.Duration, OK: o.OK,
		Arguments: call.ArgumentsJSON, Result: o.Result}
	if o.Result != nil {
		ev.Images, ev.Files, ev.Links = o.Result.Images(), o.Result.Files(), o.Result.Links()
	}
	if !o.OK {
		ev.Text = errorLine(o)
	}
	t.emit.send(ev)
}

// errorLine is a short reason for a failed call, for the user.
func errorLine(o executor.Outcome) string {
	var s string
	if o.Err != nil {
		s = o.Err.Error()
	} else if o.Result != nil {
		s = o.Result.Text()
	}
	s = strings.TrimSpace(firstLine(strings.TrimSpace(s)))
	if len(s) > 200 {
		s = strings.ToValidUTF8(s[:200], "") + "…"
	}
	return s
}

// auditRow is the audit log's entry for bc.
func (t *turn) auditRow(bc batchCall, status string, d time.Duration, n int) store.ToolCall {
	tool, args := bc.Tool, bc.Arguments
	if bc.Name == toolcall.AccessMCPResource {
		tool = toolcall.AccessMCPResource
		b, _ := json.Marshal(map[string]string{"uri": bc.URI})
		args = string(b)
	}
	return store.ToolCall{
		UserID: t.caller.UserID, ChatID: t.caller.ChatID, Server: bc.Server, Tool: tool,
		Arguments: args, Status: status, Duration: d, ResultBytes: n,
		CreatedAt: t.a.cfg.Now(), // the turn's clock, as its other records
	}
}

// audit writes row at once.
func (t *turn) audit(ctx context.Context, row store.ToolCall) {
	if err := t.a.cfg.Store.RecordToolCall(context.WithoutCancel(ctx), row); err != nil {
		// The call happened either way; losing its audit line must not
		// lose the user's turn.
		t.logger.Error("audit tool call", "server", row.Server, "tool", row.Tool, "err", err)
	}
}

// settle ends the turn with an approval request while a call of b waits,
// or else gives the model every outcome. ended reports that the turn ended
// (err is then what Turn returns).
func (t *turn) settle(ctx context.Context, b *batch, visible string) (ended bool, err error) {
	if ctx.Err() != nil {
		if err := t.append(context.WithoutCancel(ctx), b.messages()...); err != nil {
			t.logger.Error("record results", "err", err)
		}
		return true, t.cancelled(ctx)
	}
	i := b.waiting()
	if i < 0 {
		if err := t.append(ctx, b.messages()...); err != nil {
			return true, t.fail(ctx, msgInternal, err)
		}
		return false, nil
	}
	return true, t.requestApproval(ctx, b, i, visible)
}

// appOnly reports whether call is of a tool its server now declares to be
// for its MCP App alone: to the model, a tool the server does not have. A
// call checked while its server was still starting (its tools unknown,
// so approved on a card whatever its name) may name one, once it is up.
func (t *turn) appOnly(call executor.Call) bool {
	if call.Name != toolcall.UseMCPTool {
		return false
	}
	s, ok := t.a.cfg.Hub.Catalog().Server(call.Server)
	if !ok {
		return false
	}
	tool, ok := s.Tool(call.Tool)
	return ok && !tool.VisibleTo(mcpgram.AudienceModel)
}
