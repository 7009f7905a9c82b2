// Approval requests: a batch waits, stored, while one of its calls needs
// the user's approval; the press decides it and the batch carries on.

package agent

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/executor"
	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/toolcall"
)

// requestApproval stores b as the payload of an approval request for its
// call i and ends the turn with the request.
func (t *turn) requestApproval(ctx context.Context, b *batch, i int, visible string) error {
	payload, err := json.Marshal(b)
	if err != nil {
		return t.fail(ctx, msgInternal, err)
	}
	if err := t.append(ctx); err != nil {
		return t.fail(ctx, msgInternal, err)
	}
	expires := t.a.cfg.Now().Add(t.a.cfg.ApprovalTimeout)
	id, err := t.a.cfg.Store.CreatePending(ctx, store.Pending{
		ChatID: t.caller.ChatID, UserID: t.caller.UserID, ConversationID: t.conv,
		Kind: store.KindApproval, Payload: string(payload), ExpiresAt: expires,
	})
	if err != nil {
		return t.fail(ctx, msgInternal, err)
	}
	c := b.Calls[i]
	t.emit.send(Event{Kind: EventApproval, Text: visible, Server: c.Server, Tool: c.Tool, URI: c.URI, Approval: &Approval{
		PendingID: id, Server: c.Server, Tool: c.Tool, URI: c.URI, Arguments: c.Arguments, ExpiresAt: expires, Consent: c.Consent,
	}})
	return nil
}

// decide runs or refuses the call waiting for approval and carries on.
func (a *Agent) decide(ctx context.Context, req Request, emit func(Event)) error {
	d := req.Decision
	p, err := a.authorize(ctx, req.Caller, d.PendingID, store.KindApproval)
	if pressedBefore(p, err, req.TurnID) {
		// The calls it decided ran, or not, before the bot stopped: the
		// conversation carries on from what the turn stored.
		t, err := a.startTurn(ctx, req.Caller, p.ConversationID, req.TurnID, emit)
		if err != nil {
			return t.fail(ctx, msgInternal, err)
		}
		return t.rerun(ctx, -1)
	}
	if err != nil {
		return err
	}
	b, err := decodeBatch(p)
	if err != nil {
		return err
	}
	i := b.waiting()
	if i < 0 {
		return fmt.Errorf("%w: approval %d waits for nothing", ErrStale, p.ID)
	}
	resolution := "denied"
	if d.Approve {
		resolution = "approved"
		if d.Always {
			resolution = "approved always"
		}
	}
	if err := a.resolve(ctx, p.ID, resolution, req.TurnID); err != nil {
		return err
	}
	t, err := a.startTurn(ctx, req.Caller, p.ConversationID, req.TurnID, emit)
	if err != nil {
		return t.fail(ctx, msgInternal, err)
	}
	t.overBudget = req.overBudget
	c := &b.Calls[i]
	switch {
	case d.Approve && d.Always && !c.Consent:
		entry := c.Tool
		if c.Name == toolcall.AccessMCPResource {
			entry = mcpgram.ResourcePrefix + c.URI
		}
		if err := a.cfg.Hub.AllowTool(c.Server, entry); err != nil {
			// The user approved this call either way; only the "always"
			// part is lost, and the next call will ask again.
			t.logger.Error("allow tool", "server", c.Server, "entry", entry, "err", err)
		}
		c.Approved = true
		for j := range b.Calls {
			o := &b.Calls[j]
			if o.Waiting && !o.Consent && o.Name == c.Name && o.Server == c.Server && o.Tool == c.Tool && o.URI == c.URI {
				o.Waiting = false
			}
		}
	case d.Approve:
		// A consent call is approved once, whatever the press said: no
		// "always" stands in for the user's say on each call.
		c.Waiting, c.Approved = false, true
	default:
		t.deny(ctx, c, "denied")
	}
	return t.resume(ctx, b)
}

func (t *turn) deny(ctx context.Context, bc *batchCall, status string) {
	call, err := bc.toCall()
	if err != nil {
		call = executor.Call{Name: bc.Name, Server: bc.Server, Tool: bc.Tool, URI: bc.URI}
	}
	bc.Waiting = false
	bc.Text = executor.Denied(call)
	t.audit(ctx, t.auditRow(*bc, status, 0, 0))
	t.countCall(bc.Name, bc.Server, bc.Tool, "denied", nil)
	t.done = append(t.done, describe(*bc)+" (denied)")
}

// resume runs what is ready in b and carries on with the loop.
func (t *turn) resume(ctx context.Context, b *batch) error {
	t.runReady(ctx, b)
	if ended, err := t.settle(ctx, b, ""); ended || err != nil {
		return err
	}
	return t.loop(ctx)
}

// settleOverBudget is resume without the model: b's calls settle, and the
// turn ends with msg, the budget's sentence. The model's next word would
// be new work for a user over the daily budget (see Agent.overBudget).
func (t *turn) settleOverBudget(ctx context.Context, b *batch, msg string) error {
	t.runReady(ctx, b)
	if ended, err := t.settle(ctx, b, ""); ended || err != nil {
		return err
	}
	if err := t.appendEnding(ctx, outcomeBudget, ""); err != nil {
		return t.fail(ctx, msgInternal, err)
	}
	t.logger.Info("turn stopped: over the daily token budget", "user", t.caller.UserID)
	t.emit.end(Event{Kind: EventError, Text: msg}, outcomeBudget, "")
	return nil
}
