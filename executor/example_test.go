package executor_test

import (
	"errors"
	"fmt"

	"github.com/mcpgram/mcpgram/executor"
	"github.com/mcpgram/mcpgram/toolcall"
)

func ExampleExecutor_Prepare() {
	ex := executor.New(nil, executor.Options{})
	reply := toolcall.Parse("Adding them up.\n" + `<use_mcp_tool><server_name>everything</server_name><tool_name>get-sum</tool_name><arguments>{"a": 1}</arguments></use_mcp_tool>`)
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
