// Calls a model wrote while it thought: a model that reasons before it
// answers sometimes writes its call there (in <think>, or in the
// endpoint's reasoning channel, which the caller adds to Reply.Thinking)
// and ends its turn with no call, or with only a sentence, in its reply.

package toolcall

import (
	"maps"
	"slices"
	"strconv"
	"strings"
)

// ThinkingCalls returns the tool calls (UseMCPTool, in any dialect, and
// AccessMCPResource) that r's thinking holds complete and outside code,
// each distinct call once, in the order written.
func (r Reply) ThinkingCalls() []Block {
	if !strings.ContainsAny(r.Thinking, "<&{") {
		return nil
	}
	var out []Block
	seen := map[string]bool{}
	for _, b := range Parse(r.Thinking).Blocks {
		if !b.Complete || b.Fenced || (b.Name != UseMCPTool && b.Name != AccessMCPResource) {
			continue
		}
		if k := callKey(b); !seen[k] {
			seen[k] = true
			out = append(out, b)
		}
	}
	return out
}

// CallFromThinking returns r with the call its thinking holds as its one
// block, recorded as RepairReasoning, when r's text holds no block and
// its thinking exactly one distinct call; several would leave which one
// was meant unsaid. ok is false, and r returned as it is, otherwise.
func (r Reply) CallFromThinking() (Reply, bool) {
	if len(r.Blocks) > 0 {
		return r, false
	}
	calls := r.ThinkingCalls()
	if len(calls) != 1 {
		return r, false
	}
	b := calls[0]
	b.Repairs = append([]string{RepairReasoning}, b.Repairs...)
	r.Blocks = []Block{b}
	return r, true
}

// callKey is the same for blocks that call the same thing the same way,
// however each was written.
func callKey(b Block) string {
	var k strings.Builder
	for _, s := range append([]string{b.Name, b.Dialect}, sortedParams(b.Params)...) {
		k.WriteString(strconv.Itoa(len(s)) + ":" + s) // no value can pass for two
	}
	return k.String()
}

// sortedParams returns the names and values of params, by name.
func sortedParams(params map[string]string) []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(params)) {
		out = append(out, name, params[name])
	}
	return out
}
