// Stray calls: tool calls written in a reply's visible text in a shape the
// parser does not take, which would otherwise reach users as the answer,
// tags and all.

package executor

import (
	"strings"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/toolcall"
)

// checkText looks in a reply's visible text for tool calls that the parser
// cannot see: an MCP tool's name used as a tag (<echo>…</echo>), or
// use_mcp_tool's parameters written without their wrapper. It returns a
// *CheckError with feedback for the model, or nil. Call it on replies with
// no blocks, before taking their text as the answer.
func checkText(cat mcpgram.Catalog, text string) error {
	if strings.Contains(text, "<server_name>") && (strings.Contains(text, "<tool_name>") || strings.Contains(text, "<uri>")) {
		return problem(ProblemMisformatted, "Your message holds <server_name> and <tool_name> or <uri> tags outside a tool block, so nothing was called. Wrap them in <use_mcp_tool> or <access_mcp_resource>:\n%s", usage[toolcall.UseMCPTool])
	}
	for _, s := range cat.Running() {
		for _, t := range s.Tools {
			for _, name := range []string{t.Name, s.Name + "__" + t.Name} {
				if strings.Contains(text, "<"+name+">") && strings.Contains(text, "</"+name+">") {
					return problem(ProblemMisformatted, "You wrote <%s> as a tag, so nothing was called. Call the tools of MCP servers through use_mcp_tool:\n<use_mcp_tool>\n<server_name>%s</server_name>\n<tool_name>%s</tool_name>\n<arguments>{JSON object}</arguments>\n</use_mcp_tool>",
						name, s.Name, t.Name)
				}
			}
		}
	}
	return nil
}
