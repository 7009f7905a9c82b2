// Package toolcall reads the tool-call syntax of model replies: the one
// table of tags (the core tools use_mcp_tool, access_mcp_resource,
// ask_followup_question and attempt_completion, the <mcp:tool> dialect,
// other families' call syntaxes, thinking), a Parser that splits a reply
// into visible text and blocks as it streams, Visible (what a user may
// see of any model text), and DecodeArguments, which reads a call's
// arguments and repairs the slips models make in them.
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
//	shown := toolcall.Visible(text) // what a user may see of any text
package toolcall
