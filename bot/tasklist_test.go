package bot_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/bot/chats"
	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/testkit/tgfake"
)

// /tasks lists the chat's running tasks, whoever started them, oldest
// first, with how long each has run, its status and a Stop button; a
// member's press on another's task is refused, the owner's reaches the
// server.
func TestTasksCommand(t *testing.T) {
	const group = -64
	fake := tgfake.New(t)
	h := startBot(t, fake, t.TempDir(), newFakeAgent(), newFakeHub(1), nil)
	ctx := context.Background()
	put := func(chat, user int64, handle, status string, age time.Duration) int64 {
		t.Helper()
		now := time.Now()
		id, err := h.db.PutTask(ctx, store.Task{
			Server: "everything", Handle: handle, Tool: "simulate-research-query", ChatID: chats.Key(chat), UserID: strconv.FormatInt(user, 10),
			TurnID: "turn-" + handle, CallID: "1", Status: "working", StatusMessage: status, NextPoll: now.Add(time.Hour), CreatedAt: now.Add(-age),
		})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	alices := put(group, alice, "h-a", "Gathering sources...", 5*time.Minute+time.Second)
	bobs := put(group, bob, "h-b", "", 2*time.Hour+3*time.Minute)
	put(alice, alice, "h-private", "", time.Minute) // another chat's

	fake.Text(group, bob, "/tasks")
	list := waitText(t, fake, group, "Running in this chat")
	for _, want := range []string{
		"Running in this chat: 2",
		"1. simulate-research-query on everything, for 5m: Gathering sources...",
		"2. simulate-research-query on everything, for 2h 3m",
	} {
		if !strings.Contains(list.Plain, want) {
			t.Errorf("/tasks reads %q, want %q in it", list.Plain, want)
		}
	}
	if got, want := strings.Join(list.Buttons(), " "), "⏹ Stop 1=k:"+strconv.FormatInt(alices, 10)+" ⏹ Stop 2=k:"+strconv.FormatInt(bobs, 10); got != want {
		t.Errorf("buttons = %q, want %q", got, want)
	}
	if a := waitAnswer(t, fake, fake.Press(group, bob, list.ID, "k:"+strconv.FormatInt(alices, 10))); !strings.Contains(a.Text, "Only the person who asked") {
		t.Errorf("bob's press on alice's task answered %+v, want a refusal", a)
	}
	// The fake hub refuses to cancel: the owner's press got that far.
	if a := waitAnswer(t, fake, fake.Press(group, alice, list.ID, "k:"+strconv.FormatInt(alices, 10))); a.Text != "The server did not stop it." {
		t.Errorf("alice's press on her task answered %+v, want the server's refusal", a)
	}

	// A press on the list edits the task's card, and leaves the list:
	// the first list stands for the card of a task started since.
	stoppable := put(group, alice, "stoppable", "", 0)
	if err := h.db.SetTaskCard(ctx, stoppable, int64(list.ID)); err != nil {
		t.Fatal(err)
	}
	n := len(fake.Messages(group))
	fake.Text(group, alice, "/tasks")
	fake.WaitFor(t, 30*time.Second, "a second list", func() bool { return len(fake.Messages(group)) > n })
	msgs := fake.Messages(group)
	second := msgs[len(msgs)-1]
	if a := waitAnswer(t, fake, fake.Press(group, alice, second.ID, "k:"+strconv.FormatInt(stoppable, 10))); a.Text != "Stopping it…" {
		t.Errorf("alice's press on her stoppable task answered %+v", a)
	}
	waitText(t, fake, group, "Stopping: simulate-research-query on everything.")
	for _, m := range fake.Messages(group) {
		if m.ID == second.ID && !strings.Contains(m.Plain, "Running in this chat: 3") {
			t.Errorf("the list pressed became %q, want it kept", m.Plain)
		}
	}

	fake.Text(bob, bob, "/tasks")
	waitText(t, fake, bob, "No task runs in this chat.")
}
