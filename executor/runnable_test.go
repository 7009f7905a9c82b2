package executor_test

import (
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram/executor"
	"github.com/mcpgram/mcpgram/toolcall"
)

const deleteCall = "<use_mcp_tool>\n<server_name>memory</server_name>\n<tool_name>memory</tool_name>\n<arguments>{\"operation\": \"delete\", \"key\": \"k\"}</arguments>\n</use_mcp_tool>"

// A fenced call runs only when it is the reply's whole content; beside
// prose it is set aside with one note asking the model what it meant.
func TestRunnable(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		run      int
		feedback bool
	}{
		{"open call with prose runs", "Deleting it now.\n" + deleteCall, 1, false},
		{"lone fenced call runs", "```xml\n" + deleteCall + "\n```", 1, false},
		{"lone fenced call after thinking runs", "<thinking>the user asked to delete k</thinking>\n```xml\n" + deleteCall + "\n```", 1, false},
		{"the issue's example does not run", "This is what deleting a memory would look like (I am not doing it):\n```xml\n" + deleteCall + "\n```", 0, true},
		{"prose after the fence too", "```xml\n" + deleteCall + "\n```\nThat is the syntax.", 0, true},
		{"open call runs, fenced one beside prose does not", "Example:\n```\n" + deleteCall + "\n```\nNow for real:\n" + deleteCall, 1, true},
		{"fenced completion is not set aside", "Here:\n```\n<attempt_completion><result>ok</result></attempt_completion>\n```", 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			blocks, feedback := executor.Runnable(toolcall.Parse(tt.in))
			if len(blocks) != tt.run {
				t.Errorf("%d blocks to run, want %d", len(blocks), tt.run)
			}
			for _, b := range blocks {
				if b.Fenced && b.Name == toolcall.UseMCPTool && tt.feedback {
					t.Errorf("a fenced call beside prose is to run: %q", b.Raw)
				}
			}
			if (feedback != "") != tt.feedback {
				t.Fatalf("feedback = %q, want some: %v", feedback, tt.feedback)
			}
			if tt.feedback {
				for _, want := range []string{"[use_mcp_tool for 'memory' on 'memory'] Error:", "Not run", "outside any code fence"} {
					if !strings.Contains(feedback, want) {
						t.Errorf("feedback %q lacks %q", feedback, want)
					}
				}
			}
		})
	}
}
