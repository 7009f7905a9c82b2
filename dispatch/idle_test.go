package dispatch_test

import (
	"context"
	"slices"
	"testing"

	"github.com/mcpgram/mcpgram/dispatch"
	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// A chat's lane, and the goroutine that runs it, go once its work is
// done, so that chats served leave nothing behind; the chat's next items
// get a lane again and still run in order, one at a time.
func TestIdleLaneDropped(t *testing.T) {
	db := openInbox(t, "a", "b")
	var rec testenv.List[int64]
	running := make(chan int64, 8) // jobs running at once in lane a, at most one
	q := start(t, db, func(it store.InboxItem) dispatch.Job {
		return dispatch.Job{Lane: it.ChatID, Run: func(ctx context.Context) {
			if it.ChatID == "a" {
				running <- it.UpdateID
				defer func() { <-running }()
				if len(running) > 1 {
					t.Errorf("item %d ran beside another of its chat", it.UpdateID)
				}
			}
			rec.Add(it.UpdateID)
		}}
	}, dispatch.Options{})
	waitFor(t, func() bool { return len(rec.All()) == 2 && q.Stats() == dispatch.Stats{} })

	// Chat a comes back with three items at once, after b's lane is gone too.
	if err := db.InboxPut(t.Context(),
		store.InboxItem{UpdateID: 3, ChatID: "a", Payload: []byte(`{}`)},
		store.InboxItem{UpdateID: 4, ChatID: "a", Payload: []byte(`{}`)},
		store.InboxItem{UpdateID: 5, ChatID: "a", Payload: []byte(`{}`)},
	); err != nil {
		t.Fatal(err)
	}
	q.Wake()
	waitFor(t, func() bool { return len(rec.All()) == 5 && q.Stats() == dispatch.Stats{} })
	closeQueue(t, q)
	if got := rec.All(); !slices.Equal(got[2:], []int64{3, 4, 5}) {
		t.Errorf("chat a's items after its lane was dropped ran %v, want 3 4 5", got[2:])
	}
	if p := queued(t, db); len(p) != 0 {
		t.Errorf("queued: %v", p)
	}
}
