package executor

import "strings"

// A Plan says which blocks of one reply to act on.
type Plan struct {
	// Calls are the UseMCPTool and AccessMCPResource blocks to check and
	// run, in order. Incomplete blocks are included so that Check reports
	// them.
	Calls []Block
	// Final is the AskFollowupQuestion or AttemptCompletion block to act
	// on; nil when there are calls to run or none was written.
	Final *Block
	// Skipped are blocks not acted on.
	Skipped []Block
	// Feedback tells the model, in the result format, why each skipped
	// block was not acted on; "" when none was skipped. Send it with the
	// calls' outcomes.
	Feedback string
}

// PlanReply decides what to act on. When a tool call comes before the
// first question or completion, every tool call runs and the questions
// and completions wait: the model has not seen the results yet. Otherwise
// the first question or completion is acted on and everything after it is
// skipped, since it ends the turn.
func PlanReply(blocks []Block) Plan {
	var p Plan
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

// Runnable sets aside the tool calls of r that may have been only
// examples: a call inside a code fence runs only when it is the reply's
// whole content (besides space and thinking), as when a model fences
// every call it makes. Beside other text, a fenced call is what a model
// writes to show what a call would look like, so it is not run; feedback
// asks the model, in one note, to write it again unfenced if it meant it.
// Questions and completions are never set aside.
func Runnable(r Reply) (blocks []Block, feedback string) {
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
	return name == AskFollowupQuestion || name == AttemptCompletion
}

func blockTarget(b Block) string {
	if b.Name == AccessMCPResource {
		return b.Params["uri"]
	}
	return b.Params["tool_name"]
}
