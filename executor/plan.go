package executor

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/toolcall"
)

// An Action is what a Plan asks of its caller.
type Action int

const (
	// ActAnswer ends the turn with Plan.Answer: the reply's text, or a
	// completion's result.
	ActAnswer Action = iota
	// ActAsk ends the turn with Plan.Question, a checked follow-up question.
	ActAsk
	// ActRun runs Plan.Steps that passed their check, each after the
	// user's approval where it says so, and sends the model every step's
	// outcome in order, then Plan.Feedback.
	ActRun
	// ActCorrect acts on nothing: Plan.Feedback tells the model what to
	// fix. It is a mistake, which the caller counts.
	ActCorrect
	// ActClarify acts on nothing: the reply's only calls may have been
	// examples, and Plan.Feedback asks the model what it meant. A
	// well-formed reply is no mistake.
	ActClarify
)

func (a Action) String() string {
	switch a {
	case ActAnswer:
		return "answer"
	case ActAsk:
		return "ask"
	case ActRun:
		return "run"
	case ActCorrect:
		return "correct"
	case ActClarify:
		return "clarify"
	}
	return fmt.Sprintf("Action(%d)", int(a))
}

// A Plan is what to do about one model reply, decided by Prepare.
type Plan struct {
	Action Action
	// Answer is the text that ends the turn, for ActAnswer.
	Answer string
	// Question is the checked question, for ActAsk.
	Question *Call
	// Steps are the tool calls to act on, checked, in the order written,
	// for ActRun.
	Steps []Step
	// Feedback is for the model: all there is to send for ActCorrect and
	// ActClarify; for ActRun, why blocks were not acted on, to send after
	// the steps' outcomes ("" when none was left out).
	Feedback string
	// Problem is the kind of mistake, for ActCorrect; "" for an empty
	// reply. Steps carry their own (see ProblemOf).
	Problem Problem
	// Await names the servers that runnable calls go to and that are still
	// starting or restarting: their tools are not known yet, so the calls
	// were checked leniently. Wait for the servers, then Prepare the reply
	// again with the catalog then.
	Await []string
	// Repairs holds, for each call acted on, the kinds of near miss
	// repaired to make it (Call.Repairs): what the model got slightly
	// wrong and did not have to write again. For counting.
	Repairs []string
}

// A Step is one tool call of a Plan, checked against the catalog.
type Step struct {
	Block toolcall.Block
	// Call is the checked call, when Err is nil.
	Call Call
	// Err is the check's *CheckError, nil when the block passed; Feedback
	// is the same for the model, in the result format.
	Err      error
	Feedback string
	// Approve: the user must approve the call before it runs. Consent:
	// the call needs the user's own consent (hub.MetaConsentWhen), which
	// no "always allow" covers.
	Approve, Consent bool
}

// Refused reports whether the check refused a step: the reply was a
// mistake, though its other calls run.
func (p Plan) Refused() bool {
	return slices.ContainsFunc(p.Steps, func(s Step) bool { return s.Err != nil })
}

// msgEmptyReply answers a reply with nothing in it.
const msgEmptyReply = "[ERROR] Your reply had no visible text and no tool call. Answer the user, or use one of the tools."

// msgThinkingCalls answers a reply whose calls were all in its thinking,
// more than one: which was meant is not plain (see
// toolcall.Reply.CallFromThinking).
const msgThinkingCalls = "[ERROR] Your reply had no visible text and no tool call, and your reasoning held %d different tool calls, so none was run. Write the calls you mean in your reply itself, outside your reasoning."

// Prepare decides what to do about a reply, everything short of running a
// call, in this order:
//
//  1. A reply without blocks answers the user, unless it is empty (its
//     thinking perhaps holding several calls, none of which is plainly
//     meant) or holds a call in a shape the parser does not take
//     (checkText): a mistake.
//  2. Calls that may have been only examples are set aside (runnable); if
//     nothing else is left, the model is asked what it meant.
//  3. Which blocks to act on (selectBlocks): every call, or the first
//     question or completion.
//  4. Each is checked against cat. A question or completion that fails
//     its check is a mistake; a call that fails is a step with feedback.
//  5. Each checked call needs approval or not (needsApproval), where
//     approveAll is AUTO_APPROVE=all, and consent or not. A search_tools
//     call never does: it only reads the catalog.
func (e *Executor) Prepare(cat mcpgram.Catalog, r toolcall.Reply, approveAll bool) Plan {
	return e.PrepareWith(cat, r, PrepareOptions{ApproveAll: approveAll})
}

// PrepareOptions say how to prepare a reply.
type PrepareOptions struct {
	// ApproveAll is AUTO_APPROVE=all: calls need no approval, but for
	// those that need the user's consent.
	ApproveAll bool
	// Searching says the model is shown only some of the tools and finds
	// the others with search_tools: the feedback on a tool the catalog
	// does not have then suggests the tools a search for its name finds.
	Searching bool
}

// PrepareWith is Prepare with options.
func (e *Executor) PrepareWith(cat mcpgram.Catalog, r toolcall.Reply, opts PrepareOptions) Plan {
	approveAll := opts.ApproveAll
	if len(r.Blocks) == 0 {
		switch err := checkText(cat, r.Text); {
		case strings.TrimSpace(r.Text) == "":
			if n := len(r.ThinkingCalls()); n > 1 {
				return Plan{Action: ActCorrect, Feedback: fmt.Sprintf(msgThinkingCalls, n), Problem: ProblemThinkingCalls}
			}
			return Plan{Action: ActCorrect, Feedback: msgEmptyReply}
		case err != nil:
			return Plan{Action: ActCorrect, Feedback: err.Error(), Problem: ProblemOf(err)}
		}
		return Plan{Action: ActAnswer, Answer: r.Text}
	}
	blocks, aside := runnable(r)
	if len(blocks) == 0 {
		return Plan{Action: ActClarify, Feedback: aside}
	}
	sel := selectBlocks(blocks)
	p := Plan{Await: coming(cat, blocks)}
	if sel.Final != nil {
		call, err := e.check(cat, *sel.Final)
		if err == nil {
			p.Repairs = e.repaired(call)
		}
		switch {
		case err != nil:
			p.Action, p.Feedback, p.Problem = ActCorrect, feedback(*sel.Final, err), ProblemOf(err)
		case call.Name == toolcall.AskFollowupQuestion:
			p.Action, p.Question = ActAsk, &call
		default:
			p.Action, p.Answer = ActAnswer, call.Result
		}
		return p
	}
	p.Action = ActRun
	p.Feedback = strings.TrimSpace(aside + "\n\n" + sel.Feedback)
	for _, b := range sel.Calls {
		call, err := e.check(cat, b)
		if err != nil && opts.Searching {
			err = e.suggest(cat, b, err)
		}
		if err != nil {
			p.Steps = append(p.Steps, Step{Block: b, Err: err, Feedback: feedback(b, err)})
			continue
		}
		if b.Fenced { // runnable lets a fenced call through only alone
			call.Repairs = append([]string{RepairFenced}, call.Repairs...)
		}
		p.Repairs = append(p.Repairs, e.repaired(call)...)
		p.Steps = append(p.Steps, Step{
			Block: b, Call: call,
			Approve: needsApproval(cat, call, approveAll), Consent: needsConsent(cat, call),
		})
	}
	return p
}

// repaired logs the repairs made to c and returns them.
func (e *Executor) repaired(c Call) []string {
	if len(c.Repairs) > 0 {
		e.logger.Debug("near miss repaired", "repairs", c.Repairs, "call", c.Name,
			"server", c.Server, "tool", c.Tool, "arguments_bytes", len(c.ArgumentsJSON))
	}
	return c.Repairs
}

// coming returns the servers, each once, that blocks call and that are
// still starting or restarting.
func coming(cat mcpgram.Catalog, blocks []toolcall.Block) []string {
	var out []string
	for _, b := range blocks {
		s, _, found, _ := namedServer(cat, b.Params["server_name"])
		if found && s.Coming() && !slices.Contains(out, s.Name) {
			out = append(out, s.Name)
		}
	}
	return out
}

// A selection says which blocks of one reply to act on.
type selection struct {
	// Calls are the blocks to check and run, in order. Incomplete blocks
	// are included so that the check reports them.
	Calls []toolcall.Block
	// Final is the AskFollowupQuestion or AttemptCompletion block to act
	// on; nil when there are calls to run or none was written.
	Final *toolcall.Block
	// Skipped are blocks not acted on.
	Skipped []toolcall.Block
	// Feedback tells the model, in the result format, why each skipped
	// block was not acted on; "" when none was skipped.
	Feedback string
}

// selectBlocks decides what to act on. When a tool call comes before the
// first question or completion, every tool call runs and the questions
// and completions wait: the model has not seen the results yet. Otherwise
// the first question or completion is acted on and everything after it is
// skipped, since it ends the turn.
func selectBlocks(blocks []toolcall.Block) selection {
	var p selection
	firstFinal := -1
	for i, b := range blocks {
		if isFinal(b.Name) {
			firstFinal = i
			break
		}
	}
	var notes []string
	if firstFinal != 0 {
		for _, b := range blocks {
			if isFinal(b.Name) {
				p.Skipped = append(p.Skipped, b)
				notes = append(notes, Header(b.Name, "", "", false)+"\nNot acted on: it came after tool calls in the same message, before you saw their results. Read the results above, then use "+b.Name+" again in a message of its own.")
				continue
			}
			p.Calls = append(p.Calls, b)
		}
	} else {
		final := blocks[0]
		p.Final = &final
		for _, b := range blocks[1:] {
			p.Skipped = append(p.Skipped, b)
			notes = append(notes, Header(b.Name, b.Params["server_name"], blockTarget(b), false)+"\nNot acted on: it came after "+final.Name+" in the same message, which ends your turn. Use one tool per message and wait for its result.")
		}
	}
	p.Feedback = strings.Join(notes, "\n\n")
	return p
}

// runnable sets aside the tool calls of r that may have been only
// examples: a call inside a code fence runs only when it is the reply's
// whole content (besides space and thinking), as when a model fences
// every call it makes. Beside other text, a fenced call is what a model
// writes to show what a call would look like, so it is not run; feedback
// asks the model, in one note, to write it again unfenced if it meant it.
// Questions and completions are never set aside.
func runnable(r toolcall.Reply) (blocks []toolcall.Block, feedback string) {
	if strings.TrimSpace(r.Text) == "" {
		return r.Blocks, ""
	}
	var aside []string
	for _, b := range r.Blocks {
		if b.Fenced && !isFinal(b.Name) {
			aside = append(aside, Header(b.Name, b.Params["server_name"], blockTarget(b), false))
			continue
		}
		blocks = append(blocks, b)
	}
	if len(aside) == 0 {
		return r.Blocks, ""
	}
	return blocks, strings.Join(aside, "\n") + "\nNot run: written inside a code fence beside other text, so it may have been only an example. If you meant to run it, write it again outside any code fence. If it was an example, give your answer again in full, with no tool tags in it."
}

func isFinal(name string) bool {
	return name == toolcall.AskFollowupQuestion || name == toolcall.AttemptCompletion
}

func blockTarget(b toolcall.Block) string {
	if b.Name == toolcall.AccessMCPResource {
		return b.Params["uri"]
	}
	return b.Params["tool_name"]
}

// Calls returns the complete tool calls (UseMCPTool and AccessMCPResource)
// of r that are not set aside as examples: what a reply, stored before its
// calls ran, set in motion.
func Calls(r toolcall.Reply) []toolcall.Block {
	blocks, _ := runnable(r)
	var calls []toolcall.Block
	for _, b := range blocks {
		// A block cut off that would have run counts: see cutOffRunnable.
		if (b.Complete || cutOffRunnable(b)) && (b.Name == toolcall.UseMCPTool || b.Name == toolcall.AccessMCPResource) {
			calls = append(calls, b)
		}
	}
	return calls
}
