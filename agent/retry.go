package agent

import (
	"context"
	"errors"

	"github.com/mcpgram/mcpgram/executor"
	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/toolcall"
)

const (
	msgNothingToRetry = "There is no message to answer again yet."
	msgRetryPending   = "A question or approval is open: answer it first, or write a new message."
)

// retry answers the chat's last user message again. The messages from it
// on are replaced (stored, no longer read by the model) in the same
// transaction as the turn's first write, and the calls the replaced
// answer made are remembered: if the model makes one again, it waits for
// the user's approval even where it is auto-approved, as running a tool
// twice may do twice what it does.
func (t *turn) retry(ctx context.Context) error {
	switch _, err := t.a.cfg.Store.OpenPending(ctx, t.caller.ChatID); {
	case err == nil:
		t.emit.send(Event{Kind: EventError, Text: msgRetryPending})
		return nil
	case !errors.Is(err, store.ErrNotFound):
		return t.fail(ctx, msgInternal, err)
	}
	last := -1
	for i, m := range t.history {
		if m.Role == RoleUser {
			last = i
		}
	}
	if last < 0 {
		t.emit.send(Event{Kind: EventError, Text: msgNothingToRetry})
		return nil
	}
	cat := t.catalog()
	t.repeats = map[string]bool{}
	for _, m := range t.history[last+1:] {
		if m.Role != RoleAssistant {
			continue
		}
		for _, s := range t.a.exec.Prepare(cat, toolcall.Parse(m.Content), false).Steps {
			if s.Err == nil {
				t.repeats[callKey(s.Call)] = true
			}
		}
	}
	user := t.history[last]
	t.replaceFrom = user.ID
	t.history = t.history[:last:last]
	t.unsaved = append(t.unsaved, store.Message{Role: RoleUser, Content: user.Content, Media: user.Media})
	t.logger.Info("retrying the last message", "replaced_from", user.ID, "calls_made", len(t.repeats))
	return t.loop(ctx)
}

// askForRepeats makes each call of plan that the answer a retry replaced
// already made wait for approval.
func (t *turn) askForRepeats(plan executor.Plan) {
	if len(t.repeats) == 0 {
		return
	}
	for i, s := range plan.Steps {
		if s.Err == nil && (s.Call.Name == toolcall.UseMCPTool || s.Call.Name == toolcall.AccessMCPResource) && t.repeats[callKey(s.Call)] {
			plan.Steps[i].Approve = true
		}
	}
}

// callKey names a call by what it does: its target and its arguments,
// which ArgumentsJSON writes with sorted keys.
func callKey(c executor.Call) string {
	return c.Name + "\x00" + c.Server + "\x00" + c.Tool + "\x00" + c.URI + "\x00" + c.ArgumentsJSON
}
