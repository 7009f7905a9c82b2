package storetest

import (
	"slices"
	"testing"
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
