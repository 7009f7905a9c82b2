package dispatch_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"sync"

	"github.com/mcpgram/mcpgram/dispatch"
	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/store/sqlite"
)

// A queue runs each chat's updates in order, one at a time, and different
// chats beside each other; an update is marked done in the inbox once its
// job returned.
func ExampleQueue() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "mcpgram-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	db, err := sqlite.Open(ctx, filepath.Join(dir, "mcpgram.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	// What the poller stores as updates arrive.
	if err := db.InboxPut(ctx,
		store.InboxItem{UpdateID: 1, ChatID: "7", Payload: []byte("hello")},
		store.InboxItem{UpdateID: 2, ChatID: "9", Payload: []byte("hi")},
		store.InboxItem{UpdateID: 3, ChatID: "7", Payload: []byte("how are you?")},
	); err != nil {
		log.Fatal(err)
	}

	var (
		mu   sync.Mutex
		seen = map[string][]string{}
		all  sync.WaitGroup
	)
	all.Add(3)
	route := func(item store.InboxItem) dispatch.Job {
		return dispatch.Job{Lane: item.ChatID, Run: func(context.Context) {
			defer all.Done()
			mu.Lock()
			defer mu.Unlock()
			seen[item.ChatID] = append(seen[item.ChatID], string(item.Payload))
		}}
	}
	q, err := dispatch.New(db, route, dispatch.Options{})
	if err != nil {
		log.Fatal(err)
	}
	q.Start()
	all.Wait()
	if err := q.Close(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("chat 7:", seen["7"])
	fmt.Println("chat 9:", seen["9"])
	queued, err := db.InboxQueued(ctx, 0, 10)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("left in the inbox:", len(queued))
	// Output:
	// chat 7: [hello how are you?]
	// chat 9: [hi]
	// left in the inbox: 0
}
