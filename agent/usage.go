// Usage: the tokens each model call used, stored per user and day, and the
// daily budget a turn must be under to start.

package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcpgram/mcpgram/llm"
	"github.com/mcpgram/mcpgram/store"
)

// ErrOverBudget is returned by Turn, after an EventError saying when the
// budget resets, for a user who used up today's tokens.
var ErrOverBudget = errors.New("over the daily token budget")

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
func (a *Agent) Usage(ctx context.Context, userID string) (Usage, error) {
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

// overBudget returns the sentence for a user whose typed message may not
// start a turn, or "" when it may. A store that cannot tell lets the turn run: the budget
// is a brake on spending, not worth failing a turn over.
func (a *Agent) overBudget(ctx context.Context, req Request) string {
	budget := a.cfg.TokenBudgetPerUserDay
	if budget <= 0 || req.Exempt || (req.Text == "" && !req.Retry) {
		// A press answers a question or approval of a request made under
		// the budget: refusing it would leave the request half done.
		return ""
	}
	now := a.cfg.Now()
	today, err := a.cfg.Store.DayUsage(ctx, req.Caller.UserID, now)
	if err != nil {
		a.logger.Error("read token usage for the budget; letting the turn run", "turn", req.TurnID, "chat", req.Caller.ChatID, "user", req.Caller.UserID, "err", err)
		return ""
	}
	if today.Total() < budget {
		return ""
	}
	if p, err := a.cfg.Store.OpenPending(ctx, req.Caller.ChatID); err == nil && p.Kind == store.KindQuestion && p.UserID == req.Caller.UserID {
		return "" // a typed answer to the user's open question, as a press would be
	}
	return fmt.Sprintf("You have used today's token budget (%d of %d tokens). It resets at 00:00 UTC, in %s.",
		today.Total(), budget, HoursMinutes(nextMidnight(now).Sub(now)))
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
		in = 0
		for _, m := range msgs {
			in += estimate(m.Content) + imageTokens*len(m.Images)
			for _, c := range m.ToolCalls {
				in += estimate(c.Name + c.Arguments)
			}
		}
		out = estimate(resp.Content)
		for _, c := range resp.ToolCalls {
			out += estimate(c.Name + c.Arguments)
		}
	}
	model := t.profile.Model
	t.a.cfg.Metrics.Tokens(model, in, out, estimated)
	t.usage = append(t.usage, store.Usage{
		UserID: t.caller.UserID, Model: model, At: t.a.cfg.Now(), In: in, Out: out, Estimated: estimated,
	})
	return in, out, estimated
}

// refuseOverBudget ends the turn with the budget message when req's user
// has used the day's tokens, and reports whether it did.
func (a *Agent) refuseOverBudget(ctx context.Context, req Request, emit func(Event)) bool {
	msg := a.overBudget(ctx, req)
	if msg == "" {
		return false
	}
	a.logger.Info("turn refused: over the daily token budget", "turn", req.TurnID, "chat", req.Caller.ChatID, "user", req.Caller.UserID)
	a.newEmitter(ctx, req.TurnID, req.Caller, emit).end(Event{Kind: EventError, Text: msg}, outcomeBudget, "")
	return true
}
