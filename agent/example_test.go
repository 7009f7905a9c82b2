package agent_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/hub"
	"github.com/mcpgram/mcpgram/llm"
	"github.com/mcpgram/mcpgram/store/sqlite"
)

// inOrder is a model in process that gives its replies in order, one a
// call: here a tool call in the XML of Cline, then the answer.
type inOrder struct{ replies []string }

func (m *inOrder) Profile() mcpgram.Profile {
	return mcpgram.Profile{Name: "default", Model: "inOrder", ToolCalling: mcpgram.ToolCallingXML}
}

func (m *inOrder) Complete(_ context.Context, req llm.Request) (*llm.Response, error) {
	reply := m.replies[0]
	m.replies = m.replies[1:]
	if req.OnDelta != nil { // the agent streams: the reply as it comes
		req.OnDelta(reply)
	}
	return &llm.Response{Content: reply, FinishReason: "stop"}, nil
}

// A turn: the model calls the bundled calculator, which runs without a
// card (the settings auto-approve it), reads its result and answers.
// The turn's events are what a front end shows; the store keeps the
// conversation for the chat's next turn.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "mcpgram-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	settings := filepath.Join(dir, "mcp-settings.json")
	err = os.WriteFile(settings, []byte(`{"mcpServers": {"calculator": {"command": "mcp-calculator", "autoApprove": ["calculate"]}}}`), 0o600)
	if err != nil {
		log.Fatal(err)
	}
	h, err := hub.New(settings, hub.Options{NoWatch: true})
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close()
	db, err := sqlite.Open(ctx, filepath.Join(dir, "mcpgram.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	model := &inOrder{replies: []string{
		`<use_mcp_tool><server_name>calculator</server_name><tool_name>calculate</tool_name>` +
			`<arguments>{"expression": "25 * 48"}</arguments></use_mcp_tool>`,
		`<attempt_completion><result>25 × 48 = 1200</result></attempt_completion>`,
	}}
	a, err := agent.New(db, h, []agent.Model{model}, agent.Options{})
	if err != nil {
		log.Fatal(err)
	}
	if err := h.Start(ctx); err != nil {
		log.Fatal(err)
	}
	caller := mcpgram.Caller{UserID: "42", ChatID: "42"}
	err = a.Turn(ctx, agent.Request{Caller: caller, Text: "what is 25 times 48?"}, func(e agent.Event) {
		switch e.Kind {
		case agent.EventToolStart:
			fmt.Println("calling", e.Tool, "on", e.Server)
		case agent.EventToolEnd:
			fmt.Println("done:", e.OK)
		case agent.EventAnswer:
			fmt.Println("answer:", e.Text)
		}
	})
	if err != nil {
		log.Fatal(err)
	}
	conv, _ := db.CurrentConversation(ctx, "42")
	msgs, _ := db.Messages(ctx, conv)
	fmt.Println(len(msgs), "messages kept; the tool's result among them:", strings.Contains(msgs[2].Content, "1200"))
	// Output:
	// calling calculate on calculator
	// done: true
	// answer: 25 × 48 = 1200
	// 4 messages kept; the tool's result among them: true
}
