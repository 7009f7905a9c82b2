package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/store"
)

// ChatState reads, at once, what ChatInstructions, ChatProfile,
// ChatServersOff (of the chat, not of the key), CurrentConversation,
// OpenPending and OpenForms would, for the key only, and changes with
// each.
func testChatState(t *testing.T, open Open) {
	ctx := t.Context()
	db := open(t)
	const key, chat = "-100:7", "-100"
	want := store.ChatState{}
	check := func(step string) {
		t.Helper()
		got, err := db.ChatState(ctx, key, chat)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if got.Instructions != want.Instructions || got.Profile != want.Profile || !slices.Equal(got.ServersOff, want.ServersOff) ||
			got.Conversation != want.Conversation || got.PendingOpen != want.PendingOpen || got.FormsOpen != want.FormsOpen {
			t.Fatalf("%s: ChatState = %+v, want %+v", step, got, want)
		}
	}
	check("a new chat")

	// Another key's and the key's own settings.
	for _, c := range []string{chat, "-100:8"} {
		if err := db.SetChatInstructions(ctx, c, "not the key's"); err != nil {
			t.Fatal(err)
		}
		if err := db.SetChatProfile(ctx, c, "not-the-keys"); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.SetChatServersOff(ctx, key, []string{"the-keys-own"}); err != nil {
		t.Fatal(err)
	}
	check("other keys' settings")
	if err := db.SetChatInstructions(ctx, key, "Be brief."); err != nil {
		t.Fatal(err)
	}
	if err := db.SetChatProfile(ctx, key, "fast"); err != nil {
		t.Fatal(err)
	}
	if err := db.SetChatServersOff(ctx, chat, []string{"web", "files"}); err != nil {
		t.Fatal(err)
	}
	want.Instructions, want.Profile, want.ServersOff = "Be brief.", "fast", []string{"files", "web"}
	check("the key's settings and the chat's servers")

	conv, err := db.AppendTurn(ctx, store.TurnWrite{ChatID: key, Messages: []store.Message{{Role: "user", Content: "hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	want.Conversation = conv
	check("a conversation")
	if want.Conversation, err = db.ResetConversation(ctx, key); err != nil {
		t.Fatal(err)
	}
	check("a reset")

	if _, err := db.CreatePending(ctx, store.Pending{ChatID: "-100:8", UserID: "u", Kind: store.KindQuestion, Payload: "{}"}); err != nil {
		t.Fatal(err)
	}
	check("another key's question")
	pending, err := db.CreatePending(ctx, store.Pending{ChatID: key, UserID: "u", Kind: store.KindQuestion, Payload: "{}"})
	if err != nil {
		t.Fatal(err)
	}
	want.PendingOpen = true
	check("an open question")
	if err := db.ResolvePending(ctx, pending, "answered", ""); err != nil {
		t.Fatal(err)
	}
	want.PendingOpen = false
	check("an answered question")

	expires := time.Now().Add(time.Hour)
	if _, err := db.CreateForm(ctx, store.Form{ChatID: "-100:8", UserID: "u", Payload: "{}", ExpiresAt: expires}); err != nil {
		t.Fatal(err)
	}
	check("another key's form")
	form, err := db.CreateForm(ctx, store.Form{ChatID: key, UserID: "u", Payload: "{}", ExpiresAt: expires})
	if err != nil {
		t.Fatal(err)
	}
	want.FormsOpen = true
	check("an open form")
	f, err := db.GetForm(ctx, form)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SaveForm(ctx, form, f.Version, "{}", "cancelled"); err != nil {
		t.Fatal(err)
	}
	want.FormsOpen = false
	check("a closed form")
}
