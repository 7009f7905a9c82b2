package agent_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/testkit/llmfake"
)

// A chat's instructions go into its system prompt after the shared part,
// which stays the same bytes for every chat; other chats do not get them.
func TestChatInstructions(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(llmfake.Call) llmfake.Reply { return llmfake.Text(complete("ok")) }, setup{})
	ctx := t.Context()
	if err := agent.NewPrefs(e.agent).SetInstructions(ctx, alice.ChatID, "  Answer in French.  "); err != nil {
		t.Fatal(err)
	}
	if got, err := agent.NewPrefs(e.agent).Instructions(ctx, alice.ChatID); err != nil || got != "Answer in French." {
		t.Errorf("Instructions = %q, %v", got, err)
	}
	e.say("hello")
	bob := mcpgram.Caller{UserID: "222", ChatID: "600"}
	if _, err := e.turn(agent.Request{Caller: bob, Text: "hello"}); err != nil {
		t.Fatal(err)
	}
	calls := e.model.Calls()
	if len(calls) != 2 {
		t.Fatalf("%d model calls, want 2", len(calls))
	}
	withInstr, without := calls[0].Request.Messages[0].Content, calls[1].Request.Messages[0].Content
	if !strings.HasSuffix(withInstr, "Answer in French.") || !strings.Contains(withInstr, "INSTRUCTIONS FOR THIS CHAT") {
		t.Errorf("alice's system prompt does not end with her chat's instructions:\n...%s", withInstr[max(0, len(withInstr)-300):])
	}
	if !strings.HasPrefix(withInstr, without) {
		t.Error("the instructions changed the shared part of the prompt")
	}
	if strings.Contains(without, "French") {
		t.Error("another chat got alice's chat's instructions")
	}

	if err := agent.NewPrefs(e.agent).SetInstructions(ctx, alice.ChatID, strings.Repeat("é", agent.MaxInstructions+1)); !errors.Is(err, agent.ErrInstructionsTooLong) {
		t.Errorf("instructions too long: %v", err)
	}
	if err := agent.NewPrefs(e.agent).SetInstructions(ctx, alice.ChatID, ""); err != nil {
		t.Fatal(err)
	}
	e.say("again")
	if last := e.model.Calls()[2].Request.Messages[0].Content; last != without {
		t.Error("cleared instructions still change the prompt")
	}
}

// A server a chat turned off is out of that chat's prompt, and a call to
// it there is refused, not run; other chats still have it.
func TestChatServersOff(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c llmfake.Call) llmfake.Reply {
		if strings.Contains(c.Request.Last(), "call it") {
			return llmfake.Text(echo("hi"))
		}
		return llmfake.Text(complete("ok"))
	}, setup{})
	ctx := t.Context()
	if err := agent.NewPrefs(e.agent).SetServerOff(ctx, alice.ChatID, "echo", true); err != nil {
		t.Fatal(err)
	}
	if off, err := agent.NewPrefs(e.agent).ServersOff(ctx, alice.ChatID); err != nil || len(off) != 1 || off[0] != "echo" {
		t.Fatalf("ServersOff = %q, %v", off, err)
	}
	e.say("call it")
	if n := len(e.audit()); n != 0 {
		t.Errorf("a call to a server the chat turned off ran (%d audit rows)", n)
	}
	calls := e.model.Calls()
	if sys := calls[0].Request.Messages[0].Content; strings.Contains(sys, "## echo") || strings.Contains(sys, "Echoes its message") {
		t.Error("the chat's prompt still lists the server it turned off")
	}
	if fed := calls[1].Request.Last(); !strings.Contains(fed, "echo") {
		t.Errorf("the model was not told the call was refused: %q", fed)
	}

	bob := mcpgram.Caller{UserID: "222", ChatID: "600"}
	if _, err := e.turn(agent.Request{Caller: bob, Text: "call it"}); err != nil {
		t.Fatal(err)
	}
	if n := len(e.audit()); n != 1 {
		t.Errorf("another chat's call to the server: %d audit rows, want 1", n)
	}
	if err := agent.NewPrefs(e.agent).SetServerOff(ctx, alice.ChatID, "echo", false); err != nil {
		t.Fatal(err)
	}
	if off, _ := agent.NewPrefs(e.agent).ServersOff(ctx, alice.ChatID); len(off) != 0 {
		t.Errorf("ServersOff after turning it back on = %q", off)
	}
}

// A conversation held within a chat (a forum's topic, "-100/7") follows
// the servers its chat turned off, as Options.Chat names the chat; its
// instructions stay its own. Without Options.Chat it is a chat of its own.
func TestConversationFollowsItsChatsServers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		chat     func(string) string
		wantRuns int
	}{
		{"the topic follows its group", func(k string) string { c, _, _ := strings.Cut(k, "/"); return c }, 0},
		{"without Options.Chat", nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, func(c llmfake.Call) llmfake.Reply {
				if strings.Contains(c.Request.Last(), "call it") {
					return llmfake.Text(echo("hi"))
				}
				return llmfake.Text(complete("ok"))
			}, setup{config: func(w *wiring) { w.Chat = tt.chat }})
			ctx := t.Context()
			if err := agent.NewPrefs(e.agent).SetServerOff(ctx, "-100", "echo", true); err != nil {
				t.Fatal(err)
			}
			if err := agent.NewPrefs(e.agent).SetInstructions(ctx, "-100", "The group's own."); err != nil {
				t.Fatal(err)
			}
			topic := mcpgram.Caller{UserID: "111", ChatID: "-100/7"}
			if _, err := e.turn(agent.Request{Caller: topic, Text: "call it"}); err != nil {
				t.Fatal(err)
			}
			if got := len(e.audit()); got != tt.wantRuns {
				t.Errorf("calls of the server the group turned off, from its topic: got %d, want %d", got, tt.wantRuns)
			}
			if sys := e.model.Calls()[0].Request.Messages[0].Content; strings.Contains(sys, "The group's own.") {
				t.Error("the topic's prompt has its group's instructions")
			}
		})
	}
}
