// Measures: what a turn counts in the metrics, and records for /stats.
// Labels are bounded: the model, servers and tools of the catalog,
// outcomes and kinds; never users or chats, and never a name the model
// made up. The record (a row of the store's turns, with the turn's model
// calls) carries the same outcomes and kinds, and the user, which only
// admins see.

package agent

import (
	"context"
	"errors"
	"strings"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/executor"
	"github.com/mcpgram/mcpgram/llm"
	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/toolcall"
)

// Turn outcomes beyond the terminal event's kind.
const (
	outcomeLimit     = "limit"
	outcomeCancelled = "cancelled"
	outcomeBudget    = "budget"
)

// Kinds of a turn that ended in an error, beside the model's failure
// kinds (rate_limited, timeout, ...).
const (
	// kindFormat: too many replies in a row with invalid tool calls.
	kindFormat = "format"
	// kindBusy: a message in a group while another member's approval is
	// open.
	kindBusy = "busy"
	// kindModel: the model failed without saying how.
	kindModel = "model"
	// kindInternal: anything else, such as the store failing.
	kindInternal = "internal"
)

// errMistakes ends a turn after MaxMistakes invalid replies in a row.
var errMistakes = errors.New("invalid replies in a row")

// errorKind names what made a turn fail with err.
func errorKind(err error) string {
	var le *llm.Error
	switch {
	case errors.Is(err, errMistakes):
		return kindFormat
	case errors.As(err, &le):
		return strings.ReplaceAll(le.Kind.String(), " ", "_")
	}
	return kindInternal
}

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
	case errors.Is(o.Err, mcpgram.ErrTimeout):
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
	if name == toolcall.AccessMCPResource {
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
// answer holds no call. The record of the model call that wrote the reply
// gets the same counts.
func (t *turn) countFormat(cat mcpgram.Catalog, reply toolcall.Reply, plan executor.Plan) {
	m := t.a.cfg.Metrics
	model := t.profile.Model
	rec := &store.ModelCall{} // the record of the reply's model call
	if n := len(t.modelCalls); n > 0 {
		rec = &t.modelCalls[n-1]
	}
	checked := func(repairs []string) {
		if len(repairs) > 0 {
			rec.Repaired++
			m.Format(model, "repaired", repairs[0])
			return
		}
		rec.FirstTry++
		m.Format(model, "first_try", "")
	}
	fedBack := func(problem executor.Problem) {
		rec.FedBack++
		m.Format(model, "fed_back", string(problem))
	}
	switch plan.Action {
	case executor.ActAnswer, executor.ActAsk:
		if len(reply.Blocks) > 0 {
			checked(plan.Repairs) // the question's or completion's own
		}
	case executor.ActCorrect:
		if plan.Problem != "" {
			fedBack(plan.Problem)
		}
	case executor.ActRun:
		for _, s := range plan.Steps {
			if s.Err == nil {
				checked(s.Call.Repairs)
				continue
			}
			fedBack(executor.ProblemOf(s.Err))
			server, tool := known(cat, s.Block)
			t.countCall(s.Block.Name, server, tool, "invalid", nil)
		}
	}
}

// known returns the block's server and tool as labels when the catalog
// has them, "" otherwise: a name the model invented must not become a
// label.
func known(cat mcpgram.Catalog, b toolcall.Block) (server, tool string) {
	s, ok := cat.Server(b.Params["server_name"])
	if !ok {
		return "", ""
	}
	if _, ok := s.Tool(b.Params["tool_name"]); ok {
		tool = b.Params["tool_name"]
	}
	return s.Name, tool
}
