package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram/llm"
	"github.com/mcpgram/mcpgram/testkit/llmfake"
)

var echoTool = llm.Tool{Name: "everything__echo", Description: "Echoes", Parameters: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"}}}`)}

func TestNativeToolCalls(t *testing.T) {
	calls := []llmfake.ToolCall{
		{ID: "call_a", Name: "everything__echo", Arguments: `{"message": "one, with a long text to cut"}`},
		{ID: "call_b", Name: "attempt_completion", Arguments: `{"result": "done"}`},
	}
	want := []llm.ToolCall{
		{ID: "call_a", Name: "everything__echo", Arguments: calls[0].Arguments},
		{ID: "call_b", Name: "attempt_completion", Arguments: calls[1].Arguments},
	}
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "stream"}[stream], func(t *testing.T) {
			reply := llmfake.Calls(calls...)
			reply.Content = "Let me check."
			srv := llmfake.New(t, llmfake.Script(reply.Split(4)))
			c := newClient(t, srv, nil)
			var text strings.Builder
			req := llm.Request{Messages: hello, Tools: []llm.Tool{echoTool}}
			if stream {
				req.OnDelta = func(d string) { text.WriteString(d) }
			}
			resp, err := c.Complete(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(resp.ToolCalls, want) {
				t.Errorf("tool calls = %+v, want %+v", resp.ToolCalls, want)
			}
			if resp.Content != "Let me check." || resp.FinishReason != "tool_calls" {
				t.Errorf("content %q, finish %q", resp.Content, resp.FinishReason)
			}
			if stream && text.String() != "Let me check." {
				t.Errorf("streamed text %q", text.String())
			}
			got := srv.Calls()[0].Request
			if !reflect.DeepEqual(got.ToolNames(), []string{"everything__echo"}) || got.ParallelToolCalls == nil || !*got.ParallelToolCalls {
				t.Errorf("request tools %v, parallel_tool_calls %v", got.ToolNames(), got.ParallelToolCalls)
			}
		})
	}
}

// A request without tools says nothing of them: endpoints that know no
// tools must not see the fields.
func TestNoToolsNoFields(t *testing.T) {
	srv := llmfake.New(t, llmfake.Script(llmfake.Text("hi")))
	if _, err := newClient(t, srv, nil).Complete(context.Background(), llm.Request{Messages: hello}); err != nil {
		t.Fatal(err)
	}
	if r := srv.Calls()[0].Request; r.Tools != nil || r.ParallelToolCalls != nil {
		t.Errorf("tools %v, parallel_tool_calls %v sent without tools", r.Tools, r.ParallelToolCalls)
	}
}

// History with calls and their results goes out as the wire format
// wants it, which the fake checks as a strict endpoint would.
func TestToolHistoryOnTheWire(t *testing.T) {
	srv := llmfake.New(t, llmfake.Script(llmfake.Text("ok")))
	msgs := append(append([]llm.Message(nil), hello...),
		llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c1", Name: "everything__echo", Arguments: `{"message":"x"}`}}},
		llm.Message{Role: llm.RoleTool, ToolCallID: "c1", Content: "x"},
	)
	if _, err := newClient(t, srv, nil).Complete(context.Background(), llm.Request{Messages: msgs, Tools: []llm.Tool{echoTool}}); err != nil {
		t.Fatal(err)
	}
	got := srv.Calls()[0].Request.Messages
	if len(got) != 4 || got[2].ToolCalls[0].ID != "c1" || got[3].ToolCallID != "c1" || got[3].Role != "tool" {
		t.Errorf("messages on the wire: %+v", got)
	}
}

// The fake refuses what a strict endpoint refuses, so a test cannot pass
// on a malformed history.
func TestFakeRefusesBrokenToolHistory(t *testing.T) {
	call := llm.ToolCall{ID: "c1", Name: "everything__echo", Arguments: `{}`}
	cases := map[string][]llm.Message{
		"unanswered":   {{Role: llm.RoleUser, Content: "x"}, {Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{call}}, {Role: llm.RoleUser, Content: "y"}},
		"orphan":       {{Role: llm.RoleUser, Content: "x"}, {Role: llm.RoleTool, ToolCallID: "c9", Content: "r"}},
		"wrong id":     {{Role: llm.RoleUser, Content: "x"}, {Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{call}}, {Role: llm.RoleTool, ToolCallID: "c2", Content: "r"}},
		"bad name":     {{Role: llm.RoleUser, Content: "x"}, {Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c1", Name: "a.b", Arguments: "{}"}}}, {Role: llm.RoleTool, ToolCallID: "c1"}},
		"repeated ids": {{Role: llm.RoleUser, Content: "x"}, {Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{call, call}}, {Role: llm.RoleTool, ToolCallID: "c1"}, {Role: llm.RoleTool, ToolCallID: "c1"}},
	}
	for name, msgs := range cases {
		t.Run(name, func(t *testing.T) {
			srv := llmfake.New(t, llmfake.Script(llmfake.Text("ok")))
			_, err := newClient(t, srv, nil).Complete(context.Background(), llm.Request{Messages: msgs})
			var le *llm.Error
			if !errors.As(err, &le) || le.StatusCode != 400 {
				t.Fatalf("err = %v, want a 400", err)
			}
			if len(srv.TakeProblems()) == 0 {
				t.Error("the fake recorded no problem")
			}
		})
	}
}

// Streamed deltas are put together by index, whatever order and however
// split they arrive in, and a hostile stream of indexes is bounded.
func TestStreamedCallsByIndex(t *testing.T) {
	many := make([]llmfake.ToolCall, 300)
	for i := range many {
		many[i] = llmfake.ToolCall{Name: fmt.Sprintf("t%d", i), Arguments: fmt.Sprintf(`{"i":%d}`, i)}
	}
	interleaved := llmfake.Calls(many...).Split(3)
	interleaved.Interleave = true
	srv := llmfake.New(t, llmfake.Script(interleaved))
	resp, err := newClient(t, srv, nil).Complete(context.Background(), llm.Request{Messages: hello, Tools: []llm.Tool{echoTool}, OnDelta: func(string) {}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.ToolCalls) != 300 {
		t.Fatalf("%d calls, want 300", len(resp.ToolCalls))
	}
	for i, c := range resp.ToolCalls {
		if c.Name != fmt.Sprintf("t%d", i) || c.Arguments != fmt.Sprintf(`{"i":%d}`, i) || c.ID != fmt.Sprintf("call_fake_%d", i) {
			t.Fatalf("call %d = %+v", i, c)
		}
	}
}

func TestToolsRejected(t *testing.T) {
	srv := llmfake.New(t, llmfake.RejectTools(llmfake.Script(llmfake.Text("plain")), nil))
	c := newClient(t, srv, nil)
	_, err := c.Complete(context.Background(), llm.Request{Messages: hello, Tools: []llm.Tool{echoTool}})
	if !llm.ToolsRejected(err) {
		t.Fatalf("err = %v, want tools rejected", err)
	}
	if len(srv.Calls()) != 1 {
		t.Errorf("%d calls: a rejection is not retried", len(srv.Calls()))
	}
	resp, err := c.Complete(context.Background(), llm.Request{Messages: hello})
	if err != nil || resp.Content != "plain" {
		t.Fatalf("without tools: %v, %v", resp, err)
	}
	for _, e := range []error{
		&llm.Error{Kind: llm.KindBadRequest, StatusCode: 400, Message: "context length exceeded"},
		&llm.Error{Kind: llm.KindRateLimited, StatusCode: 429, Message: "tools rate"},
		&llm.Error{Kind: llm.KindServer, StatusCode: 500, Message: "function crashed"},
		errors.New("tools"),
	} {
		if llm.ToolsRejected(e) {
			t.Errorf("ToolsRejected(%v) = true", e)
		}
	}
	if !llm.ToolsRejected(&llm.Error{Kind: llm.KindBadRequest, StatusCode: 422, Message: "Unrecognized request argument supplied: functions"}) {
		t.Error("a 422 about functions is a rejection")
	}
}
