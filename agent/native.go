// Native tool calling (TOOL_CALLING=native, or auto where the endpoint
// takes tools). The model gets the catalog as OpenAI functions and calls
// them in "tool_calls"; everything after that is the XML path's: each
// call is written as the XML block it stands for, and the reply, so
// rewritten, is parsed, checked, repaired, approved, run, stored and
// counted by the same code.
//
// # One stored form, two renderings
//
// The store keeps one form whatever the mode: the assistant's reply as
// text with its calls as XML blocks (ahead of its visible text, so that
// no fence the text leaves open can swallow them), and each outcome as a
// RoleTool message of its own. What the model reads is rendered from
// that per call: for XML, consecutive tool messages join into one user
// message, the same bytes as before; for native, the reply's blocks
// become tool_calls with ids made of their place in the history, and the
// RoleTool messages after it the "tool" messages answering them, in
// order. So a conversation can switch mode, or model, between any two
// calls.

package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/executor"
	"github.com/mcpgram/mcpgram/internal/suggest"
	"github.com/mcpgram/mcpgram/llm"
	"github.com/mcpgram/mcpgram/prompt"
	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/toolcall"
)

// support remembers, per endpoint and model, whether the endpoint took
// native tools: absent while unknown.
type support struct {
	mu sync.Mutex
	m  map[string]bool
}

// supportKey names the endpoint and model of profile p.
func supportKey(p mcpgram.Profile) string { return p.BaseURL + " " + p.Model }

// native reports whether a call of profile p goes native.
func (a *Agent) native(p mcpgram.Profile) bool {
	switch p.ToolCalling {
	case mcpgram.ToolCallingNative:
		return true
	case mcpgram.ToolCallingAuto:
		a.support.mu.Lock()
		defer a.support.mu.Unlock()
		ok, known := a.support.m[supportKey(p)]
		return ok || !known
	}
	return false
}

// learn records what a native call in auto mode showed. It returns true
// when the endpoint is now known to refuse tools: err is a refusal and
// the endpoint never took them before (after a success, a refusal is
// about that request, not about tools).
func (a *Agent) learn(err error, p mcpgram.Profile) (refused bool) {
	a.support.mu.Lock()
	defer a.support.mu.Unlock()
	if a.support.m == nil {
		a.support.m = map[string]bool{}
	}
	key := supportKey(p)
	switch ok, known := a.support.m[key]; {
	case err == nil:
		a.support.m[key] = true
	case llm.ToolsRejected(err) && !(known && ok):
		a.support.m[key] = false
		return true
	}
	return false
}

// A toolset is the native functions of one catalog, ready to send.
type toolset struct {
	version uint64
	set     *prompt.Toolset
	tools   []llm.Tool
}

func newToolset(cat mcpgram.Catalog, search *prompt.Search) *toolset {
	set := prompt.FunctionsWith(cat, prompt.Options{Search: search})
	ts := &toolset{version: cat.Version, set: set, tools: make([]llm.Tool, len(set.Functions))}
	for i, f := range set.Functions {
		ts.tools[i] = llm.Tool{Name: f.Name, Description: f.Description, Parameters: f.Parameters}
	}
	return ts
}

// toolset returns the functions of cat, built once per catalog Version
// like the prompt; a catalog a chat narrowed (own) is built each time.
// With search, only the pinned tools are offered, beside search_tools.
func (a *Agent) toolset(cat mcpgram.Catalog, own, search bool) *toolset {
	var s *prompt.Search
	cache := &a.tools[0]
	if search {
		s, cache = a.pinned(), &a.tools[1]
	}
	if own {
		return newToolset(cat, s)
	}
	if ts := cache.Load(); ts != nil && ts.version == cat.Version {
		return ts
	}
	ts := newToolset(cat, s)
	cache.Store(ts)
	return ts
}

// callsXML writes native calls as the XML blocks they stand for, one
// after another. A name the toolset does not know is kept for the
// check to answer ("did you mean"): server__tool split at its first
// "__", anything else as a tool name with no server, which the check
// resolves when one server alone has such a tool. Arguments go as
// written, their '<' '>' '&' escaped as JSON allows so that no value
// can close its tag; empty arguments are {}.
func callsXML(ts *prompt.Toolset, calls []llm.ToolCall) string {
	var b strings.Builder
	for _, c := range calls {
		target, ok := ts.Target(c.Name)
		args := jsonEscape(c.Arguments)
		switch {
		case ok && target.Server == "":
			writeCore(&b, target.Tool, args)
		case ok:
			writeUse(&b, target.Server, target.Tool, args)
		default:
			server, tool, found := strings.Cut(tagSafe(c.Name), "__")
			if !found {
				server, tool = "", server
			}
			writeUse(&b, server, tool, args)
		}
	}
	return b.String()
}

func jsonEscape(s string) string {
	if strings.TrimSpace(s) == "" {
		return "{}"
	}
	var out bytes.Buffer
	json.HTMLEscape(&out, []byte(s))
	return out.String()
}

// tagSafe keeps a name the model made up from opening or closing a tag.
func tagSafe(s string) string {
	return strings.NewReplacer("<", "_", ">", "_", "\n", " ").Replace(s)
}

// textSafe keeps free text inside its tag: a closing tag in it loses its
// slash's meaning by a space.
func textSafe(s, param string) string {
	return strings.ReplaceAll(s, "</"+param+">", "< /"+param+">")
}

func writeUse(b *strings.Builder, server, tool, args string) {
	fmt.Fprintf(b, "<%s>\n<server_name>%s</server_name>\n<tool_name>%s</tool_name>\n<arguments>%s</arguments>\n</%s>\n\n",
		toolcall.UseMCPTool, server, tool, args, toolcall.UseMCPTool)
}

// writeCore writes a core action's call; arguments that are no JSON
// object leave its parameters out, which the check reports.
func writeCore(b *strings.Builder, name, args string) {
	var p map[string]any
	_ = json.Unmarshal([]byte(args), &p)
	str := func(k string) string {
		s, _ := p[k].(string)
		return textSafe(s, k)
	}
	fmt.Fprintf(b, "<%s>\n", name)
	switch name {
	case toolcall.AccessMCPResource:
		fmt.Fprintf(b, "<server_name>%s</server_name>\n<uri>%s</uri>\n", tagSafe(str("server_name")), tagSafe(str("uri")))
	case toolcall.AskFollowupQuestion:
		fmt.Fprintf(b, "<question>%s</question>\n", str("question"))
		if o, ok := p["options"]; ok {
			enc, _ := json.Marshal(o) // escapes '<', so the tag holds
			fmt.Fprintf(b, "<options>%s</options>\n", enc)
		}
	case toolcall.AttemptCompletion:
		fmt.Fprintf(b, "<result>%s</result>\n", str("result"))
	case toolcall.SearchTools:
		fmt.Fprintf(b, "<query>%s</query>\n", str("query"))
		if s := str("server_name"); s != "" {
			fmt.Fprintf(b, "<server_name>%s</server_name>\n", tagSafe(s))
		}
	}
	fmt.Fprintf(b, "</%s>\n\n", name)
}

// nativeFeedback rewrites the plan's feedback for a model that made
// native calls: no XML examples (see executor.NativeFeedback); and a call
// of a server's tool that named no tool the check found also hears the
// function it may have meant, by the name the model called.
func nativeFeedback(p *executor.Plan, ts *prompt.Toolset) {
	p.Feedback = executor.NativeFeedback(p.Feedback)
	for i := range p.Steps {
		s := &p.Steps[i]
		s.Feedback = executor.NativeFeedback(s.Feedback)
		if s.Err == nil || s.Block.Name != toolcall.UseMCPTool {
			continue
		}
		switch executor.ProblemOf(s.Err) {
		case executor.ProblemUnknownServer, executor.ProblemUnknownTool, executor.ProblemMissingParam:
			s.Feedback += closestFunction(ts, s.Block)
		}
	}
}

// closestFunction names the function closest to the one b was written
// from, or says none is.
func closestFunction(ts *prompt.Toolset, b toolcall.Block) string {
	name := b.Params["tool_name"]
	if b.Params["server_name"] != "" {
		name = b.Params["server_name"] + "__" + name
	}
	// The functions offered first, then the tools a search would find.
	var names, others []string
	for _, f := range ts.Functions {
		names = append(names, f.Name)
	}
	for n := range ts.Targets {
		if !ts.Offers(n) {
			others = append(others, n)
		}
	}
	slices.Sort(others)
	if best, ok := suggest.Closest(name, append(names, others...)); ok {
		return fmt.Sprintf("\nNo function is named %q; did you mean %q?", name, best)
	}
	return fmt.Sprintf("\nNo function is named %q: call one of the functions offered.", name)
}

// storedReply is what the store keeps of a native reply: its calls as
// XML, then its text.
func storedReply(ts *prompt.Toolset, resp *llm.Response) string {
	if len(resp.ToolCalls) == 0 {
		return resp.Content
	}
	return callsXML(ts, resp.ToolCalls) + resp.Content
}

// Results for a call the history holds no result of, in the native
// rendering: a tool call must be answered before the conversation goes
// on.
const (
	noteAsked     = "The question was shown to the user; their answer follows."
	noteCompleted = "The answer was shown to the user."
	noteNoResult  = "No result of its own: see the other results of this message."
)

// nativeMessages renders the stored history for a native call (see the
// file's comment), in buf's place (see turn.callBuf). An assistant
// message whose blocks cannot all be calls (an example set aside, a
// foreign syntax, a block cut off) is sent as the text it is, its
// outcomes as a user message, as in XML.
func nativeMessages(buf []llm.Message, system string, history []store.Message, images [][]llm.Image, ts *prompt.Toolset) []llm.Message {
	msgs := append(buf[:0], llm.Message{Role: llm.RoleSystem, Content: system})
	var open []llm.ToolCall // calls of the last reply still to answer
	answer := func(content string) {
		msgs = append(msgs, llm.Message{Role: llm.RoleTool, ToolCallID: open[0].ID, Content: content})
		open = open[1:]
	}
	closeOpen := func() {
		for len(open) > 0 {
			switch open[0].Name {
			case toolcall.AskFollowupQuestion:
				answer(noteAsked)
			case toolcall.AttemptCompletion:
				answer(noteCompleted)
			default:
				answer(noteNoResult)
			}
		}
	}
	add := func(role, content string, imgs []llm.Image) {
		closeOpen()
		if last := &msgs[len(msgs)-1]; len(msgs) > 1 && last.Role == role && len(last.ToolCalls) == 0 && last.Role != llm.RoleTool {
			last.Content = last.Content + "\n\n" + content
			last.Images = append(last.Images[:len(last.Images):len(last.Images)], imgs...)
			return
		}
		msgs = append(msgs, llm.Message{Role: role, Content: content, Images: imgs})
	}
	for i, m := range history {
		switch {
		case m.Role == RoleTool && len(open) > 0:
			answer(m.Content)
		case m.Role == RoleAssistant:
			text, calls, ok := nativeCalls(ts, m.Content, i)
			if !ok {
				add(llm.RoleAssistant, m.Content, nil)
				continue
			}
			closeOpen()
			msgs = append(msgs, llm.Message{Role: llm.RoleAssistant, Content: text, ToolCalls: calls})
			open = calls
		default:
			var imgs []llm.Image
			if i < len(images) {
				imgs = images[i]
			}
			add(llm.RoleUser, m.Content, imgs)
		}
	}
	closeOpen()
	return msgs
}

// nativeCalls returns a stored reply's text and its blocks as native
// calls, with ids made of the message's place (at) and the call's; ok is
// false when the reply has no blocks, or one that is not a whole call.
func nativeCalls(ts *prompt.Toolset, content string, at int) (text string, calls []llm.ToolCall, ok bool) {
	if !strings.Contains(content, "<") {
		return "", nil, false // no tag, no block: spares the parse
	}
	r := toolcall.Parse(content)
	if len(r.Blocks) == 0 {
		return "", nil, false
	}
	for i, b := range r.Blocks {
		if !b.Complete || b.Fenced || b.Dialect != "" {
			return "", nil, false
		}
		name, args, known := nativeCall(ts, b)
		if !known {
			return "", nil, false
		}
		calls = append(calls, llm.ToolCall{ID: fmt.Sprintf("call_%d_%d", at, i), Name: name, Arguments: args})
	}
	return r.Text, calls, true
}

// nativeCall is block b as a function call.
func nativeCall(ts *prompt.Toolset, b toolcall.Block) (name, args string, ok bool) {
	obj := func(kv ...string) string {
		m := map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = b.Params[kv[i+1]]
		}
		if o, ok := b.Params["options"]; ok && b.Name == toolcall.AskFollowupQuestion {
			var opts []any
			if json.Unmarshal([]byte(o), &opts) == nil {
				m["options"] = opts
			}
		}
		enc, _ := json.Marshal(m)
		return string(enc)
	}
	switch b.Name {
	case toolcall.UseMCPTool:
		server, tool := b.Params["server_name"], b.Params["tool_name"]
		name = ts.Name(server, tool)
		if name == "" {
			name = prompt.FunctionName(server, tool)
		}
		args = b.Params["arguments"]
		if !json.Valid([]byte(args)) {
			// What was wrong is in the call's result; a strict endpoint
			// refuses a history whose arguments are not JSON.
			args = "{}"
		}
		return name, args, true
	case toolcall.AccessMCPResource:
		return b.Name, obj("server_name", "server_name", "uri", "uri"), true
	case toolcall.AskFollowupQuestion:
		return b.Name, obj("question", "question"), true
	case toolcall.AttemptCompletion:
		return b.Name, obj("result", "result"), true
	case toolcall.SearchTools:
		if b.Params["server_name"] != "" {
			return b.Name, obj("query", "query", "server_name", "server_name"), true
		}
		return b.Name, obj("query", "query"), true
	}
	return "", "", false
}
