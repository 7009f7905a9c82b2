// Package toolcall reads the tool-call syntax of model replies: the one
// table of tags (the core tools use_mcp_tool, access_mcp_resource,
// ask_followup_question and attempt_completion, the <mcp:tool> and
// <tool_call> dialects, other families' call syntaxes, thinking), a
// Parser that splits a reply into visible text and blocks as it streams,
// Visible (what a user may see of any model text), and DecodeArguments,
// which reads a call's arguments and repairs the slips models make in
// them.
//
// Models trained on other formats write calls in them, and the parser
// reads those whose intent is plain as the call they mean, recording how
// on the Block (Block.Repairs): tags written HTML-escaped; the Hermes and
// Qwen families' <tool_call>, with JSON or with <function=…> and
// <parameter=…> inside; a reply that is nothing but a JSON call ({"tool":
// …, "params": …}); and, through Reply.CallFromThinking, the one call a
// reply's thinking holds when its text holds none. None of them is ever
// visible text.
//
// It knows no catalog: whether a block names a tool that exists, with
// arguments its schema accepts, is for package executor to check, and
// running it is the hub's. It imports nothing of mcpgram's, so that
// rendering, the prompt and the test fakes can read the syntax without
// linking the hub and its MCP client.
//
// # One reply, step by step
//
//	p := toolcall.NewParser()
//	visible, done := p.Write(chunk) // per streamed chunk: show visible
//	reply := p.Close()              // text, thinking, blocks
//	reply.Thinking += reasoning     // the endpoint's reasoning channel, if any
//	reply, _ = reply.CallFromThinking()
//	shown := toolcall.Visible(text) // what a user may see of any text
package toolcall
