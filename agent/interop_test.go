package agent_test

import (
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/internal/testenv"
)

// TestInteropEverything runs a turn against the MCP reference server
// @modelcontextprotocol/server-everything, which the other tests stand in
// for with hub/testdata/echo: a tool call, a typed one and a resource
// read, whose results reach the model, in every way of calling tools
// (natively, the resource read is the access_mcp_resource function). It
// skips where Node is absent.
func TestInteropEverything(t *testing.T) {
	t.Parallel()
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			interopEverything(t, m)
		})
	}
}

func interopEverything(t *testing.T, m mode) {
	const readCall = "<access_mcp_resource>\n<server_name>everything</server_name>\n<uri>demo://resource/dynamic/text/1</uri>\n</access_mcp_resource>"
	e := m.env(t, m.script(
		useTool("everything", "echo", `{"message": "hi there"}`)+"\n"+useTool("everything", "get-sum", `{"a": 2, "b": 3}`)+"\n"+readCall,
		complete("All three."),
	), setup{servers: map[string]any{"everything": testenv.EverythingEntry(t, "echo", "get-sum", "resource:demo://*")}})
	r := e.say("echo, add and read")
	if got := r.last(t); got.Kind != agent.EventAnswer || got.Text != "All three." {
		t.Fatalf("last event = %+v", got)
	}
	res := read(answered(e, m)[1].Request)
	for _, want := range []string{
		"[use_mcp_tool for 'echo' on 'everything'] Result:\n```\nEcho: hi there",
		"[use_mcp_tool for 'get-sum' on 'everything'] Result:\n```\nThe sum of 2 and 3 is 5.",
		"[access_mcp_resource for 'demo://resource/dynamic/text/1' on 'everything'] Result:",
	} {
		if !strings.Contains(res, want) {
			t.Errorf("the model read:\n%s\nwant %q", res, want)
		}
	}
	if a := e.audit(); len(a) != 3 {
		t.Errorf("audit has %d calls, want 3", len(a))
	}
}
