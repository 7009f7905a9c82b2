package postgres_test

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/store/postgres"
)

// instances opens two handles on one database: two instances of the bot.
func instances(t *testing.T) (a, b *postgres.DB) {
	t.Helper()
	a, dsn := open(t)
	b, err := postgres.Open(t.Context(), dsn)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return a, b
}

// put stores one update per (id, chat) pair.
func put(t *testing.T, db *postgres.DB, chatOf map[int64]string) {
	t.Helper()
	var items []store.InboxItem
	for id, chat := range chatOf {
		items = append(items, store.InboxItem{UpdateID: id, ChatID: chat, Payload: []byte(`{}`)})
	}
	if err := db.InboxPut(t.Context(), items...); err != nil {
		t.Fatal(err)
	}
}

func claim(t *testing.T, db *postgres.DB, instance string, newChats int, lease time.Duration) []int64 {
	t.Helper()
	items, err := db.ClaimQueued(t.Context(), store.Claim{Instance: instance, NewChats: newChats, LeaseFor: lease})
	if err != nil {
		t.Fatalf("ClaimQueued(%s): %v", instance, err)
	}
	var ids []int64
	for i, it := range items {
		if i > 0 && it.UpdateID <= items[i-1].UpdateID {
			t.Fatalf("ClaimQueued(%s): ids out of order: %v", instance, items)
		}
		ids = append(ids, it.UpdateID)
	}
	return ids
}

func TestClaimNoUpdateTwice(t *testing.T) {
	t.Parallel()
	a, b := instances(t)
	chatOf := map[int64]string{}
	for id := int64(1); id <= 200; id++ {
		chatOf[id] = "chat" + strconv.FormatInt(id%40, 10)
	}
	put(t, a, chatOf)

	// A claim takes a few chats, and leaves the others to the next
	// instance.
	got := map[string][]int64{"A": claim(t, a, "A", 3, time.Hour), "B": claim(t, b, "B", 3, time.Hour)}
	if len(got["A"]) == 0 || len(got["B"]) == 0 {
		t.Fatalf("first claims: A %v, B %v; want some for each", got["A"], got["B"])
	}
	// Then both claim at once, a few chats at a time, until nothing is left.
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, in := range []struct {
		name string
		db   *postgres.DB
	}{{"A", a}, {"B", b}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 30 {
				items, err := in.db.ClaimQueued(context.Background(), store.Claim{Instance: in.name, NewChats: 3, LeaseFor: time.Hour})
				if err != nil {
					t.Errorf("ClaimQueued(%s): %v", in.name, err)
					return
				}
				mu.Lock()
				for _, it := range items {
					if !slices.Contains(got[in.name], it.UpdateID) {
						got[in.name] = append(got[in.name], it.UpdateID)
					}
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	owner := map[int64]string{}
	chatOwner := map[string]string{}
	for name, ids := range got {
		for _, id := range ids {
			if prev, ok := owner[id]; ok {
				t.Errorf("update %d claimed by %s and %s", id, prev, name)
			}
			owner[id] = name
			if prev, ok := chatOwner[chatOf[id]]; ok && prev != name {
				t.Errorf("chat %s claimed by %s and %s", chatOf[id], prev, name)
			}
			chatOwner[chatOf[id]] = name
		}
	}
	if len(owner) != len(chatOf) {
		t.Errorf("claimed %d updates, want %d", len(owner), len(chatOf))
	}
}

func TestClaimLeaseKeepsChatWithOwner(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	a, b := instances(t)
	put(t, a, map[int64]string{1: "x", 2: "x"})
	if got := claim(t, a, "A", 10, time.Hour); !slices.Equal(got, []int64{1, 2}) {
		t.Fatalf("A claimed %v, want [1 2]", got)
	}
	// A new update of the chat goes to its owner too, not to B.
	put(t, b, map[int64]string{3: "x", 4: "y"})
	if got := claim(t, b, "B", 10, time.Hour); !slices.Equal(got, []int64{4}) {
		t.Errorf("B claimed %v, want [4]", got)
	}
	if got := claim(t, a, "A", 10, time.Hour); !slices.Equal(got, []int64{1, 2, 3}) {
		t.Errorf("A claimed %v, want [1 2 3]", got)
	}
	// Once A marked them done and claimed again, the chat is free.
	if err := a.InboxDone(ctx, 1, 2, 3); err != nil {
		t.Fatal(err)
	}
	if got := claim(t, a, "A", 10, time.Hour); len(got) != 0 {
		t.Errorf("A claimed %v, want none", got)
	}
	if owner, _, err := a.LeaseOwner(ctx, "x"); err != nil || owner != "" {
		t.Errorf("lease of idle chat x: owner %q, err %v; want released", owner, err)
	}
	put(t, a, map[int64]string{5: "x"})
	if got := claim(t, b, "B", 10, time.Hour); !slices.Equal(got, []int64{4, 5}) {
		t.Errorf("B claimed %v, want [4 5]", got)
	}
}

func TestClaimTakesOverExpiredLease(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	a, b := instances(t)
	put(t, a, map[int64]string{1: "x", 2: "x", 3: "y"})
	const lease = 300 * time.Millisecond
	if got := claim(t, a, "A", 10, lease); !slices.Equal(got, []int64{1, 2, 3}) {
		t.Fatalf("A claimed %v, want [1 2 3]", got)
	}
	// A finishes update 3, then dies in the middle of update 1.
	if err := a.InboxDone(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if got := claim(t, b, "B", 10, lease); len(got) != 0 {
		t.Fatalf("B claimed %v while A's lease lives, want none", got)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := claim(t, b, "B", 10, time.Hour)
		if len(got) > 0 {
			if !slices.Equal(got, []int64{1, 2}) {
				t.Fatalf("B took over %v, want [1 2]", got)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("B never took over the chat of A's expired lease")
		}
		time.Sleep(20 * time.Millisecond) // polling for the lease to expire, with a deadline
	}
	if owner, live, err := b.LeaseOwner(ctx, "x"); err != nil || owner != "B" || !live {
		t.Errorf("lease of x: %q live %v err %v; want B's", owner, live, err)
	}
	// A, back (a slow instance, not a dead one), has lost the chat.
	if got := claim(t, a, "A", 10, lease); len(got) != 0 {
		t.Errorf("A claimed %v after losing its lease, want none", got)
	}
}

func TestReleaseLeasesHandsChatsOver(t *testing.T) {
	t.Parallel()
	a, b := instances(t)
	put(t, a, map[int64]string{1: "x", 2: "y"})
	if got := claim(t, a, "A", 10, time.Hour); len(got) != 2 {
		t.Fatalf("A claimed %v, want 2 updates", got)
	}
	if err := a.ReleaseLeases(t.Context(), "A"); err != nil {
		t.Fatal(err)
	}
	if got := claim(t, b, "B", 10, time.Hour); !slices.Equal(got, []int64{1, 2}) {
		t.Errorf("B claimed %v after A released, want [1 2]", got)
	}
}

func TestClaimNeedsInstance(t *testing.T) {
	t.Parallel()
	a, _ := open(t)
	for _, c := range []store.Claim{{LeaseFor: time.Second}, {Instance: "A"}} {
		if _, err := a.ClaimQueued(t.Context(), c); err == nil {
			t.Errorf("ClaimQueued(%+v): no error", c)
		}
	}
}
