// Usage: the tokens each model call used, stored per user and day, and the
// daily budget a turn must be under to start.

package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/llm"
	"github.com/mcpgram/mcpgram/store"
)

// ErrOverBudget is returned by Turn, after an EventError saying when the
// budget resets, for a user who used up today's tokens.
var ErrOverBudget = errors.New("over the daily token budget")

// A Meter reads the tokens users' turns used, and their budget.
type Meter struct{ a *Agent }

// NewMeter returns the meter of a's turns.
func NewMeter(a *Agent) *Meter { return &Meter{a: a} }

// A Usage is a user's tokens and budget, for /usage.
type Usage struct {
	store.UserUsage
	// Budget is TokenBudgetPerUserDay; 0 means none.
	Budget int64
	// Resets is when today's count starts again: the next 00:00 UTC.
	Resets time.Time
}

// Usage returns the user's tokens today and this month (UTC) and their
// budget.
func (m *Meter) Usage(ctx context.Context, userID string) (Usage, error) {
	a := m.a
	now := a.cfg.Now()
	u, err := a.cfg.Store.UserUsage(ctx, userID, now)
	if err != nil {
		return Usage{}, err
	}
	return Usage{UserUsage: u, Budget: a.cfg.TokenBudgetPerUserDay, Resets: nextMidnight(now)}, nil
}

// nextMidnight is the next 00:00 UTC after t.
func nextMidnight(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), t.Day()+1, 0, 0, 0, 0, time.UTC)
}

// overBudget returns the sentence for a user whose request may not run,
// "" when it may; and whether the user is over the day's budget (a
// request let run over it is the end of the one that crossed it). A store
// that cannot tell lets the request run: the budget is a brake on
// spending, not worth failing a turn over.
//
// Over the budget, a user may finish the request that crossed it (answer
// its question, typed or pressed; decide its approval) and no more: a
// question or approval asked by a turn that itself ran over the budget is
// new work, or a model that ends every reply with a question would make
// the budget endless.
//
// A store that is unavailable (store.ErrUnavailable) is err: the request
// is to run again once it is back, as every other of its reads would
// fail too.
func (a *Agent) overBudget(ctx context.Context, req Request) (msg string, over bool, err error) {
	if req.Exempt {
		return "", false, nil
	}
	if msg, err = a.budgetSpent(ctx, req.TurnID, req.Caller); msg == "" {
		return "", false, err
	}
	p, ok := a.answers(ctx, req)
	switch {
	case !ok:
		return msg, true, nil
	case p.ChatID != req.Caller.ChatID || p.UserID != req.Caller.UserID:
		return "", true, nil // not the presser's: refused as such, doing nothing
	case pendingOverBudget(p):
		return msg, true, nil
	}
	return "", true, nil
}

// budgetSpent returns the sentence for a user who used the day's budget,
// or "" when there is none, it is not used up, or the store cannot tell;
// err only when the store is unavailable.
func (a *Agent) budgetSpent(ctx context.Context, turnID string, caller mcpgram.Caller) (string, error) {
	budget := a.cfg.TokenBudgetPerUserDay
	if budget <= 0 {
		return "", nil
	}
	now := a.cfg.Now()
	today, err := a.cfg.Store.DayUsage(ctx, caller.UserID, now)
	if errors.Is(err, store.ErrUnavailable) {
		return "", err
	}
	if err != nil {
		a.logger.Error("read token usage for the budget; letting the turn run", "turn", turnID, "chat", caller.ChatID, "user", caller.UserID, "err", err)
		return "", nil
	}
	if today.Total() < budget {
		return "", nil
	}
	return fmt.Sprintf("You have used today's token budget (%d of %d tokens). It resets at 00:00 UTC, in %s.",
		today.Total(), budget, HoursMinutes(nextMidnight(now).Sub(now))), nil
}

// answers returns the question or approval req answers: the one pressed,
// or the user's open question a typed message answers.
func (a *Agent) answers(ctx context.Context, req Request) (store.Pending, bool) {
	var id int64
	switch {
	case req.Answer != nil:
		id = req.Answer.PendingID
	case req.Decision != nil:
		id = req.Decision.PendingID
	case req.Text != "":
		p, err := a.cfg.Store.OpenPending(ctx, req.Caller.ChatID)
		return p, err == nil && p.Kind == store.KindQuestion && p.UserID == req.Caller.UserID
	default:
		return store.Pending{}, false
	}
	p, err := a.cfg.Store.GetPending(ctx, id)
	return p, err == nil
}

// pendingOverBudget reports whether p was asked by a turn that ran over
// the daily budget (the payloads of questions and approvals say so).
func pendingOverBudget(p store.Pending) bool {
	var flag struct {
		OverBudget bool `json:"over_budget"`
	}
	// A payload that does not decode is refused by the turn itself.
	_ = json.Unmarshal([]byte(p.Payload), &flag)
	return flag.OverBudget
}

// HoursMinutes writes a wait d, rounded up to the minute, as "5 h 12 min",
// the way the budget message says when it resets.
func HoursMinutes(d time.Duration) string {
	m := int((d + time.Minute - 1) / time.Minute)
	switch {
	case m >= 60 && m%60 == 0:
		return fmt.Sprintf("%d h", m/60)
	case m >= 60:
		return fmt.Sprintf("%d h %d min", m/60, m%60)
	}
	return fmt.Sprintf("%d min", max(m, 1))
}

// spent notes the tokens of a model call, to be stored with the turn's
// next write, and counts them. A provider that reports none gets the
// estimate the context budget uses.
func (t *turn) spent(msgs []llm.Message, resp *llm.Response) (in, out int, estimated bool) {
	in, out = resp.Usage.PromptTokens, resp.Usage.CompletionTokens
	if !resp.Usage.Reported() {
		estimated = true
		in = estimateIn(msgs)
		out = estimate(resp.Content)
		for _, c := range resp.ToolCalls {
			out += estimate(c.Name + c.Arguments)
		}
	}
	t.record(in, out, estimated)
	return in, out, estimated
}

// spentCut notes the tokens of a reply cut at its bound after read bytes:
// the provider reported none, but the endpoint streamed them, and a
// runaway endpoint must not spend the day's budget unseen.
func (t *turn) spentCut(msgs []llm.Message, read int) {
	t.record(estimateIn(msgs), (read+3)/4, true)
}

// estimateIn estimates the tokens of the messages sent.
func estimateIn(msgs []llm.Message) int {
	in := 0
	for _, m := range msgs {
		in += estimate(m.Content) + ImageTokens*len(m.Images)
		for _, c := range m.ToolCalls {
			in += estimate(c.Name + c.Arguments)
		}
	}
	return in
}

// record counts a model call's tokens and keeps them for the next write.
func (t *turn) record(in, out int, estimated bool) {
	model := t.profile.Model
	t.a.cfg.Metrics.Tokens(model, in, out, estimated)
	t.usage = append(t.usage, store.Usage{
		UserID: t.caller.UserID, Model: model, At: t.a.cfg.Now(), In: in, Out: out, Estimated: estimated,
	})
}

// refuseOverBudget ends the turn with the budget message when req's user
// has used the day's tokens, and reports whether it did; err wraps
// store.ErrUnavailable when the store could not tell.
func (a *Agent) refuseOverBudget(ctx context.Context, req *Request, emit func(Event)) (bool, error) {
	msg, over, err := a.overBudget(ctx, *req)
	req.overBudget = over
	if msg == "" {
		return false, err
	}
	a.logger.Info("turn refused: over the daily token budget", "turn", req.TurnID, "chat", req.Caller.ChatID, "user", req.Caller.UserID)
	a.newEmitter(ctx, req.TurnID, req.Caller, emit).end(Event{Kind: EventError, Text: msg}, outcomeBudget, "")
	return true, nil
}
