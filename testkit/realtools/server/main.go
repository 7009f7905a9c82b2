// Command server is an MCP server for tests that serves the tools of one
// server of package realtools, as that server lists them: its name,
// description, and each tool's title, description and input schema. A
// call answers with the tool's name and its arguments, so that a test
// sees which tool ran with what.
//
//	server -server github          the github tools
//	server -server github -n 10    the first ten of them, in file order
//	server -server github -instructions
//	                               what it is for in its instructions
//	                               instead of its description
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpgram/mcpgram/testkit/realtools"
)

func main() {
	name := flag.String("server", "", "the realtools server to serve")
	n := flag.Int("n", 0, "serve only the first n tools (0: all)")
	instructions := flag.Bool("instructions", false, "say what the server is for in its instructions, not its description")
	flag.Parse()
	var found *realtools.Server
	for _, s := range realtools.Servers() {
		if s.Name == *name {
			found = &s
		}
	}
	if found == nil {
		log.Fatalf("no realtools server %q", *name)
	}
	tools := found.Tools
	if *n > 0 && *n < len(tools) {
		tools = tools[:*n]
	}
	about := server.WithDescription(found.About)
	if *instructions {
		about = server.WithInstructions(found.About + " Call get_me first.\nMore lines follow.")
	}
	s := server.NewMCPServer(found.Name, "1.0.0", server.WithToolCapabilities(false), about)
	for _, t := range tools {
		tool := mcp.NewToolWithRawSchema(t.Name, t.Description, t.InputSchema)
		tool.Title = t.Title
		s.AddTool(tool, func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			args, _ := json.Marshal(req.GetArguments())
			return mcp.NewToolResultText(fmt.Sprintf("%s ran with %s", req.Params.Name, args)), nil
		})
	}
	if err := server.ServeStdio(s); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
