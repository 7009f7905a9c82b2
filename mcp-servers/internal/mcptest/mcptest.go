// Package mcptest starts a bundled MCP server binary as a real child process
// and talks to it with mcp-go's client, the way a host would. It is for the
// bundled servers' black-box tests.
package mcptest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// ProtocolVersion is pinned: an empty or newest version makes mcp-go's client
// first probe with server/discover, which costs seconds per start.
const ProtocolVersion = "2025-06-18"

// Start launches binary in the test's working folder; see StartIn.
func Start(t testing.TB, binary string, env ...string) *client.Client {
	t.Helper()
	return StartIn(t, "", binary, env...)
}

// StartIn launches binary in dir (the test's working folder if empty) with
// a minimal environment (PATH and HOME) plus env, completes the initialize
// handshake, and closes the client, and with it the process, when the test
// ends. The server's stderr is shown if the test failed.
func StartIn(t testing.TB, dir, binary string, env ...string) *client.Client {
	t.Helper()
	return StartAs(t, "mcptest", dir, binary, env...)
}

// StartAs is StartIn with the client's name in initialize, for a server
// that treats some clients differently.
func StartAs(t testing.TB, clientName, dir, binary string, env ...string) *client.Client {
	t.Helper()
	// The child's stderr is written by exec's copying goroutine and read
	// by the test.
	stderr := &testenv.Buffer{}
	c, err := client.NewStdioMCPClientWithOptions(binary, env, nil,
		transport.WithCommandFunc(func(ctx context.Context, command string, env, args []string) (*exec.Cmd, error) {
			cmd := exec.CommandContext(ctx, command, args...)
			cmd.Dir = dir
			cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, env...)
			cmd.Stderr = stderr
			return cmd, nil
		}))
	if err != nil {
		t.Fatalf("start %s: %v", binary, err)
	}
	t.Cleanup(func() {
		_ = c.Close()
		if t.Failed() {
			t.Logf("%s stderr:\n%s", filepath.Base(binary), stderr.String())
		}
	})

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = ProtocolVersion
	init.Params.ClientInfo = mcp.Implementation{Name: clientName, Version: "0"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatalf("initialize %s: %v", binary, err)
	}
	return c
}

// A Result is the text of a tool result and its isError flag.
type Result struct {
	Text    string
	IsError bool
}

// Call calls tool with args, passing meta as the request's _meta (nil for
// none). A transport or protocol failure fails the test; a tool error is
// returned in the Result.
func Call(t testing.TB, c *client.Client, tool string, args map[string]any, meta map[string]any) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	if meta != nil {
		req.Params.Meta = &mcp.Meta{AdditionalFields: meta}
	}
	res, err := c.CallTool(ctx, req)
	if err != nil {
		t.Fatalf("call %s(%v): %v", tool, args, err)
	}
	var texts []string
	for _, content := range res.Content {
		if tc, ok := mcp.AsTextContent(content); ok {
			texts = append(texts, tc.Text)
		}
	}
	return Result{Text: strings.Join(texts, "\n"), IsError: res.IsError}
}

// Tools lists the server's tools by name.
func Tools(t testing.TB, c *client.Client) map[string]mcp.Tool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatalf("list tools: %v", err)
	}
	tools := make(map[string]mcp.Tool, len(res.Tools))
	for _, tool := range res.Tools {
		tools[tool.Name] = tool
	}
	return tools
}
