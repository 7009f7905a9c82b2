// Follow-up questions: the model asks, the turn ends, and a pressed
// option (or a typed message, see Turn) answers it in a new turn.

package agent

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcpgram/mcpgram/executor"
	"github.com/mcpgram/mcpgram/store"
)

type questionPayload struct {
	Question string   `json:"question"`
	Options  []string `json:"options,omitempty"`
	// OverBudget: asked by a turn that ran over the user's daily budget
	// (see Agent.overBudget).
	OverBudget bool `json:"over_budget,omitempty"`
}

// ask stores the follow-up question and ends the turn with it.
func (t *turn) ask(ctx context.Context, visible string, call executor.Call) error {
	payload, err := json.Marshal(questionPayload{Question: call.Question, Options: call.Options, OverBudget: t.overBudget})
	if err != nil {
		return t.fail(ctx, msgInternal, err)
	}
	t.shareLast(questionShown(visible, call))
	if err := t.append(ctx); err != nil {
		return t.fail(ctx, msgInternal, err)
	}
	id, err := t.a.cfg.Store.CreatePending(ctx, store.Pending{
		ChatID: t.caller.ChatID, UserID: t.caller.UserID, ConversationID: t.conv,
		Kind: store.KindQuestion, Payload: string(payload),
	})
	if err != nil {
		return t.fail(ctx, msgInternal, err)
	}
	t.emit.send(Event{Kind: EventQuestion, Text: visible, Question: &Question{PendingID: id, Text: call.Question, Options: call.Options}})
	return nil
}

// answer continues the conversation with a pressed option.
func (a *Agent) answer(ctx context.Context, req Request, emit func(Event)) error {
	p, err := a.authorize(ctx, req.Caller, req.Answer.PendingID, store.KindQuestion)
	again := pressedBefore(p, err, req.TurnID)
	if err != nil && !again {
		return err
	}
	var q questionPayload
	if err := json.Unmarshal([]byte(p.Payload), &q); err != nil {
		return fmt.Errorf("decode question %d: %w", p.ID, err)
	}
	if req.Answer.Option < 0 || req.Answer.Option >= len(q.Options) {
		return fmt.Errorf("%w: question %d has no option %d", ErrStale, p.ID, req.Answer.Option)
	}
	if !again {
		if err := a.resolve(ctx, p.ID, "answered", req.TurnID); err != nil {
			return err
		}
	}
	t, err := a.startTurn(ctx, req.Caller, p.ConversationID, req.TurnID, emit)
	if err != nil {
		return t.fail(ctx, msgInternal, err)
	}
	t.overBudget = req.overBudget
	if i := requestOf(t.stored, req.TurnID); again && i >= 0 {
		return t.rerun(ctx, i)
	}
	t.unsaved = append(t.unsaved, store.Message{Role: RoleUser, Content: "<answer>" + q.Options[req.Answer.Option] + "</answer>", TurnID: req.TurnID})
	return t.loop(ctx)
}
