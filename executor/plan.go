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

func isFinal(name string) bool {
	return name == AskFollowupQuestion || name == AttemptCompletion
}

func blockTarget(b Block) string {
	if b.Name == AccessMCPResource {
		return b.Params["uri"]
	}
	return b.Params["tool_name"]
}
