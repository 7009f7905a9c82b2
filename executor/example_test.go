package executor_test

import (
	"errors"
	"fmt"

	"github.com/mcpgram/mcpgram/executor"
)

func ExampleParse() {
	r := executor.Parse("Let me look.\n<thinking>echo is the right tool</thinking>\n" +
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
	p := executor.NewParser()
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

func ExampleExecutor_Prepare() {
	ex := executor.New(nil, executor.Options{})
	reply := executor.Parse("Adding them up.\n" + `<use_mcp_tool><server_name>everything</server_name><tool_name>get-sum</tool_name><arguments>{"a": 1}</arguments></use_mcp_tool>`)
	plan := ex.Prepare(testCatalog(), reply, false)
	fmt.Println(plan.Action, len(plan.Steps))
	var ce *executor.CheckError
	if err := plan.Steps[0].Err; errors.As(err, &ce) {
		fmt.Println(ce.Problem)
	}
	fmt.Println(plan.Steps[0].Feedback)
	// Output:
	// run 1
	// schema
	// [use_mcp_tool for 'get-sum' on 'everything'] Error:
	// The arguments for "get-sum" do not match its input schema:
	// - at /: missing property 'b'
	// The tool's input schema: {"properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"],"type":"object"}
}
