package toolcall_test

import (
	"fmt"

	"github.com/mcpgram/mcpgram/toolcall"
)

func ExampleParse() {
	r := toolcall.Parse("Let me look.\n<thinking>echo is the right tool</thinking>\n" +
		"<use_mcp_tool>\n<server_name>everything</server_name>\n<tool_name>echo</tool_name>\n" +
		"<arguments>{\"message\": \"<hi>\"}</arguments>\n</use_mcp_tool>")
	fmt.Printf("%q\n", r.Text)
	for _, b := range r.Blocks {
		fmt.Println(b.Name, b.Params["server_name"], b.Params["tool_name"], b.Params["arguments"], b.Complete)
	}
	// Output:
	// "Let me look."
	// use_mcp_tool everything echo {"message": "<hi>"} true
}

func ExampleParser() {
	p := toolcall.NewParser()
	for _, chunk := range []string{"Checking", " now <use_", "mcp_tool><server_name>everything</server_name>", "<tool_name>echo</tool_name></use_mcp_tool>"} {
		visible, done := p.Write(chunk)
		fmt.Printf("%q %d\n", visible, len(done))
	}
	r := p.Close()
	fmt.Println(len(r.Blocks), r.Blocks[0].Complete)
	// Output:
	// "Checking" 0
	// "Checking now" 0
	// "Checking now" 0
	// "Checking now" 1
	// 1 true
}
