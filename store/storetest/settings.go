package storetest

import (
	"slices"
	"testing"

	"github.com/mcpgram/mcpgram/store"
)

// A chat's instructions are its own, replaced whole, cleared by "", and
// kept across a reopen.
func testChatInstructions(t *testing.T, open Open) {
	ctx := t.Context()
	db := open(t)
	if got, err := db.ChatInstructions(ctx, "c1"); err != nil || got != "" {
		t.Fatalf("instructions of a new chat = %q, %v", got, err)
	}
	for _, set := range []string{"Answer in French.", "Be brief.\nUse metric units."} {
		if err := db.SetChatInstructions(ctx, "c1", set); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.SetChatInstructions(ctx, "c2", "Other chat."); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = open(t)
	if got, err := db.ChatInstructions(ctx, "c1"); err != nil || got != "Be brief.\nUse metric units." {
		t.Errorf("instructions after a reopen = %q, %v", got, err)
	}
	if err := db.SetChatInstructions(ctx, "c1", ""); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.ChatInstructions(ctx, "c1"); got != "" {
		t.Errorf("cleared instructions = %q", got)
	}
	if got, _ := db.ChatInstructions(ctx, "c2"); got != "Other chat." {
		t.Errorf("another chat's instructions = %q", got)
	}
}

// A chat's servers turned off are its own, kept as a set, beside its
// instructions, and across a reopen.
func testChatServersOff(t *testing.T, open Open) {
	ctx := t.Context()
	db := open(t)
	if got, err := db.ChatServersOff(ctx, "c1"); err != nil || len(got) != 0 {
		t.Fatalf("servers off in a new chat = %q, %v", got, err)
	}
	if err := db.SetChatInstructions(ctx, "c1", "Be brief."); err != nil {
		t.Fatal(err)
	}
	if err := db.SetChatServersOff(ctx, "c1", []string{"web", "files", "web"}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = open(t)
	if got, err := db.ChatServersOff(ctx, "c1"); err != nil || !slices.Equal(got, []string{"files", "web"}) {
		t.Errorf("servers off after a reopen = %q, %v", got, err)
	}
	if got, _ := db.ChatInstructions(ctx, "c1"); got != "Be brief." {
		t.Errorf("instructions beside the servers = %q", got)
	}
	if got, _ := db.ChatServersOff(ctx, "c2"); len(got) != 0 {
		t.Errorf("another chat's servers off = %q", got)
	}
	if err := db.SetChatServersOff(ctx, "c1", nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.ChatServersOff(ctx, "c1"); len(got) != 0 {
		t.Errorf("servers off after turning all on = %q", got)
	}
	// The chats with some server off, for the menus that follow them.
	for _, c := range []string{"c3", "c2"} {
		if err := db.SetChatServersOff(ctx, c, []string{"web"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.SetChatInstructions(ctx, "c4", "Hi."); err != nil {
		t.Fatal(err)
	}
	if got, err := db.ChatsWithServersOff(ctx); err != nil || !slices.Equal(got, []string{"c2", "c3"}) {
		t.Errorf("ChatsWithServersOff = %q, %v; want c2 and c3 (c1 turned all on again, c4 set only instructions)", got, err)
	}
}

// A chat's model profile is its own, kept beside its other settings
// (which setting it leaves alone), across a reopen, and "" returns it to
// the default.
func testChatProfile(t *testing.T, open Open) {
	ctx := t.Context()
	db := open(t)
	if got, err := db.ChatProfile(ctx, "c1"); err != nil || got != "" {
		t.Fatalf("model of a new chat = %q, %v", got, err)
	}
	if err := db.SetChatInstructions(ctx, "c1", "Be brief."); err != nil {
		t.Fatal(err)
	}
	if err := db.SetChatServersOff(ctx, "c1", []string{"web"}); err != nil {
		t.Fatal(err)
	}
	for _, set := range []string{"fast", "coder"} {
		if err := db.SetChatProfile(ctx, "c1", set); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.SetChatProfile(ctx, "c2", "fast"); err != nil {
		t.Fatal(err)
	}
	db = reopen(t, db, open)
	if got, err := db.ChatProfile(ctx, "c1"); err != nil || got != "coder" {
		t.Errorf("model after a reopen = %q, %v; want coder", got, err)
	}
	if got, _ := db.ChatInstructions(ctx, "c1"); got != "Be brief." {
		t.Errorf("instructions beside the model = %q", got)
	}
	if got, _ := db.ChatServersOff(ctx, "c1"); !slices.Equal(got, []string{"web"}) {
		t.Errorf("servers off beside the model = %q", got)
	}
	if err := db.SetChatInstructions(ctx, "c1", ""); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.ChatProfile(ctx, "c1"); got != "coder" {
		t.Errorf("model after clearing the instructions = %q, want coder", got)
	}
	if err := db.SetChatProfile(ctx, "c1", ""); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.ChatProfile(ctx, "c1"); got != "" {
		t.Errorf("model back to the default = %q", got)
	}
	if got, _ := db.ChatProfile(ctx, "c2"); got != "fast" {
		t.Errorf("another chat's model = %q, want fast", got)
	}
}

// Whether a group keeps one conversation for its topics is its own
// choice, off by default, kept beside its other settings (which it
// leaves alone) and across a reopen.
func testChatTopicsShared(t *testing.T, open Open) {
	ctx := t.Context()
	db := open(t)
	if got, err := db.ChatTopicsShared(ctx, "-100"); err != nil || got {
		t.Fatalf("topics shared in a new chat = %v, %v; want false", got, err)
	}
	if err := db.SetChatInstructions(ctx, "-100", "Be brief."); err != nil {
		t.Fatal(err)
	}
	if err := db.SetChatTopicsShared(ctx, "-100", true); err != nil {
		t.Fatal(err)
	}
	if err := db.SetChatProfile(ctx, "-100", "fast"); err != nil {
		t.Fatal(err)
	}
	db = reopen(t, db, open)
	tests := []struct {
		chat string
		want bool
	}{
		{"-100", true},
		{"-200", false},
		{"-100/7", false}, // a topic's key is not its group's
	}
	for _, tt := range tests {
		t.Run(tt.chat, func(t *testing.T) {
			if got, err := db.ChatTopicsShared(ctx, tt.chat); err != nil || got != tt.want {
				t.Errorf("ChatTopicsShared(%q) = %v, %v; want %v", tt.chat, got, err, tt.want)
			}
		})
	}
	if got, _ := db.ChatInstructions(ctx, "-100"); got != "Be brief." {
		t.Errorf("instructions beside the topics = %q", got)
	}
	if got, _ := db.ChatProfile(ctx, "-100"); got != "fast" {
		t.Errorf("model beside the topics = %q", got)
	}
	if err := db.SetChatTopicsShared(ctx, "-100", false); err != nil {
		t.Fatal(err)
	}
	if got, err := db.ChatTopicsShared(ctx, "-100"); err != nil || got {
		t.Errorf("topics shared after separating them = %v, %v; want false", got, err)
	}
}

// The keys the bot gives forum topics ("-100/7": a group's id, a slash,
// the topic's) are chats of their own: conversations, resets, pending
// interactions, forms and settings of one are not another's, nor the
// group's, whose key prefixes theirs.
func testTopicKeys(t *testing.T, open Open) {
	ctx := t.Context()
	db := open(t)
	keys := []string{"-100", "-100/7", "-100/9", "-1007"}
	convs := map[string]int64{}
	for _, k := range keys {
		c := Active(t, db, k)
		convs[k] = c
		if err := AppendMessages(ctx, db, c, store.Message{Role: "user", Content: "in " + k}); err != nil {
			t.Fatal(err)
		}
		if _, err := db.CreatePending(ctx, store.Pending{ChatID: k, UserID: "u", Kind: store.KindQuestion, Payload: k}); err != nil {
			t.Fatal(err)
		}
		if _, err := db.CreateForm(ctx, store.Form{ChatID: k, UserID: "u", Payload: k}); err != nil {
			t.Fatal(err)
		}
		if err := db.SetChatInstructions(ctx, k, "for "+k); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.ResetConversation(ctx, "-100/7"); err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		t.Run(k, func(t *testing.T) {
			cur, err := db.CurrentConversation(ctx, k)
			if err != nil {
				t.Fatal(err)
			}
			if reset := k == "-100/7"; (cur != convs[k]) != reset {
				t.Errorf("conversation of %q = %d, was %d; want a new one only for the reset topic", k, cur, convs[k])
			}
			msgs, err := db.Messages(ctx, convs[k])
			if err != nil || len(msgs) != 1 || msgs[0].Content != "in "+k {
				t.Errorf("messages of %q = %+v, %v; want its own one", k, msgs, err)
			}
			if p, err := db.OpenPending(ctx, k); err != nil || p.Payload != k {
				t.Errorf("open pending of %q = %+v, %v; want its own", k, p, err)
			}
			if fs, err := db.OpenForms(ctx, k); err != nil || len(fs) != 1 || fs[0].Payload != k {
				t.Errorf("open forms of %q = %+v, %v; want its own one", k, fs, err)
			}
			if got, err := db.ChatInstructions(ctx, k); err != nil || got != "for "+k {
				t.Errorf("instructions of %q = %q, %v", k, got, err)
			}
		})
	}
}
