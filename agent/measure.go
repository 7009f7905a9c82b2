// Measures: what a turn counts in the metrics. Labels are bounded: the
// model, servers and tools of the catalog, outcomes and kinds; never users
// or chats, and never a name the model made up.

package agent

import (
	"context"
	"errors"
	"strings"

	"github.com/mcpgram/mcpgram/executor"
	"github.com/mcpgram/mcpgram/hub"
	"github.com/mcpgram/mcpgram/llm"
)

// Turn outcomes beyond the terminal event's kind.
const (
	outcomeLimit     = "limit"
	outcomeCancelled = "cancelled"
	outcomeBudget    = "budget"
)

// outcomeOf names how a turn ended with ev, unless the turn said better.
func outcomeOf(ev Event) string {
	switch ev.Kind {
	case EventAnswer:
		return "answer"
	case EventQuestion:
		return "question"
	case EventApproval:
		return "approval"
	}
	return "error"
}

// modelOutcome names how a model call ended: ok, cancelled, or the
// llm.Error's kind.
func modelOutcome(ctx context.Context, err error) string {
	var le *llm.Error
	switch {
	case err == nil:
		return "ok"
	case ctx.Err() != nil:
		return outcomeCancelled
	case errors.As(err, &le):
		return strings.ReplaceAll(le.Kind.String(), " ", "_")
	}
	return "error"
}

// callStatus names how a call ran: ok, tool_error (the tool said it
// failed), timeout, or failed (not running, transport, cancelled).
func callStatus(o executor.Outcome) string {
	switch {
	case o.OK:
		return "ok"
	case o.Err == nil:
		return "tool_error"
	case errors.Is(o.Err, hub.ErrTimeout):
		return "timeout"
	}
	return "failed"
}

// countCall counts a call that ran, or did not (denied, invalid: d 0).
func (t *turn) countCall(name, server, tool, status string, o *executor.Outcome) {
	m := t.a.cfg.Metrics
	if m == nil {
		return
	}
	if name == executor.AccessMCPResource {
		m.ResourceRead(server, status)
		return
	}
	if o != nil {
		m.ToolCall(server, tool, status, o.Duration)
		return
	}
	m.ToolCall(server, tool, status, 0)
}

// countFormat counts the tool-call format of a reply, once per block
// acted on: right at the first try, repaired (with the first kind of near
// miss the executor repaired, in its fixed order), or fed back with its
// problem; and each refused call as an invalid tool call. Blocks set aside
// as possible examples are not counted: they are no mistake. A plain
// answer holds no call.
func (t *turn) countFormat(cat hub.Catalog, reply executor.Reply, plan executor.Plan) {
	m := t.a.cfg.Metrics
	if m == nil {
		return
	}
	model := t.profile.ModelName
	checked := func(repairs []string) {
		if len(repairs) > 0 {
			m.Format(model, "repaired", repairs[0])
			return
		}
		m.Format(model, "first_try", "")
	}
	switch plan.Action {
	case executor.ActAnswer, executor.ActAsk:
		if len(reply.Blocks) > 0 {
			checked(plan.Repairs) // the question's or completion's own
		}
	case executor.ActCorrect:
		if plan.Problem != "" {
			m.Format(model, "fed_back", string(plan.Problem))
		}
	case executor.ActRun:
		for _, s := range plan.Steps {
			if s.Err == nil {
				checked(s.Call.Repairs)
				continue
			}
			m.Format(model, "fed_back", string(executor.ProblemOf(s.Err)))
			server, tool := known(cat, s.Block)
			t.countCall(s.Block.Name, server, tool, "invalid", nil)
		}
	}
}

// known returns the block's server and tool as labels when the catalog
// has them, "" otherwise: a name the model invented must not become a
// label.
func known(cat hub.Catalog, b executor.Block) (server, tool string) {
	s, ok := cat.Server(b.Params["server_name"])
	if !ok {
		return "", ""
	}
	if _, ok := s.Tool(b.Params["tool_name"]); ok {
		tool = b.Params["tool_name"]
	}
	return s.Name, tool
}
