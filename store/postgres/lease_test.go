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
	"github.com/mcpgram/mcpgram/testkit/testenv"
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
	if n := heartbeats(t, a, "A"); n != 0 {
		t.Errorf("A's heartbeats after it released: %d, want none", n)
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

// heartbeats counts the heartbeat rows of instance.
func heartbeats(t *testing.T, db *postgres.DB, instance string) int64 {
	t.Helper()
	n, err := postgres.QueryInt(t.Context(), db, `SELECT count(*) FROM instance_heartbeats WHERE name = $1`, instance)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// waitDead waits until chat's lease is no longer live: its owner stopped
// beating, by the database's clock.
func waitDead(t *testing.T, db *postgres.DB, chat string) {
	t.Helper()
	testenv.Eventually(t, 10*time.Second, "the lease of "+chat+" to expire", func() bool {
		_, live, err := db.LeaseOwner(t.Context(), chat)
		return err == nil && !live
	})
}

// Renewing is one write per instance: a read of the inbox renews every
// lease of the instance by its heartbeat, and writes no lease row.
func TestClaimRenewsEveryLeaseWithOneWrite(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	a, _ := open(t)
	chatOf := map[int64]string{}
	for id := int64(1); id <= 30; id++ {
		chatOf[id] = "chat" + strconv.FormatInt(id, 10)
	}
	put(t, a, chatOf)
	if got := claim(t, a, "A", 30, time.Minute); len(got) != 30 {
		t.Fatalf("A claimed %d updates, want 30", len(got))
	}
	// Rows written by one transaction share its xmin.
	const beat = `SELECT xmin::text::bigint FROM instance_heartbeats WHERE name = 'A'`
	const sameTx = `SELECT count(*) FROM chat_leases WHERE xmin = (SELECT xmin FROM instance_heartbeats WHERE name = 'A')`
	first, err := postgres.QueryInt(ctx, a, beat)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := postgres.QueryInt(ctx, a, sameTx); err != nil || n != 30 {
		t.Fatalf("leases written with A's first heartbeat: %d (%v), want 30", n, err)
	}
	if got := claim(t, a, "A", 0, time.Minute); len(got) != 30 {
		t.Fatalf("A claimed %d updates again, want 30", len(got))
	}
	second, err := postgres.QueryInt(ctx, a, beat)
	if err != nil || second == first {
		t.Fatalf("A's heartbeat after a second claim: written by %d (%v), first by %d; want renewed", second, err, first)
	}
	if n, err := postgres.QueryInt(ctx, a, sameTx); err != nil || n != 0 {
		t.Errorf("leases written by the renewing claim: %d (%v), want none", n, err)
	}
	for _, chat := range chatOf {
		if owner, live, err := a.LeaseOwner(ctx, chat); err != nil || owner != "A" || !live {
			t.Errorf("lease of %s: %q live %v err %v; want A's", chat, owner, live, err)
		}
	}
}

// A lease lives while its owner beats, long after the time it was taken
// for; once the owner stops, another instance takes the chat.
func TestClaimLeaseLivesWithItsOwnersHeartbeat(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	a, b := instances(t)
	put(t, a, map[int64]string{1: "x"})
	if got := claim(t, a, "A", 10, 200*time.Millisecond); !slices.Equal(got, []int64{1}) {
		t.Fatalf("A claimed %v, want [1]", got)
	}
	claim(t, a, "A", 0, time.Hour) // A beats for an hour
	testenv.Eventually(t, 10*time.Second, "the time x was taken for to pass", func() bool {
		n, err := postgres.QueryInt(ctx, a, `SELECT count(*) FROM chat_leases
			WHERE chat_id = 'x' AND expires_at > (extract(epoch FROM clock_timestamp()) * 1000)::bigint`)
		return err == nil && n == 0
	})
	if owner, live, err := a.LeaseOwner(ctx, "x"); err != nil || owner != "A" || !live {
		t.Fatalf("lease of x while A beats: %q live %v err %v; want A's", owner, live, err)
	}
	if got := claim(t, b, "B", 10, time.Hour); len(got) != 0 {
		t.Fatalf("B claimed %v while A beats, want none", got)
	}
	claim(t, a, "A", 0, 200*time.Millisecond) // A's last beat
	waitDead(t, a, "x")
	if got := claim(t, b, "B", 10, time.Hour); !slices.Equal(got, []int64{1}) {
		t.Fatalf("B took over %v, want [1]", got)
	}
	if got := claim(t, a, "A", 10, time.Hour); len(got) != 0 {
		t.Errorf("A claimed %v after losing x, want none", got)
	}
}

// An instance is not taken for dead while the database has been up for
// less than its lease: nobody could beat while it was down.
func TestClaimDatabaseStartGrantsALease(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	a, b := instances(t)
	put(t, a, map[int64]string{1: "x"})
	if got := claim(t, a, "A", 10, time.Hour); !slices.Equal(got, []int64{1}) {
		t.Fatalf("A claimed %v, want [1]", got)
	}
	// As if A had last beaten two hours ago, before the database went
	// away: it started since, less than A's lease (an hour) ago.
	const past = `UPDATE instance_heartbeats SET expires_at = expires_at - 7200000 WHERE name = 'A';
		UPDATE chat_leases SET expires_at = expires_at - 7200000 WHERE owner = 'A'`
	if err := postgres.Exec(ctx, a, past); err != nil {
		t.Fatal(err)
	}
	if owner, live, err := a.LeaseOwner(ctx, "x"); err != nil || owner != "A" || !live {
		t.Fatalf("lease of x: %q live %v err %v; want A's", owner, live, err)
	}
	if got := claim(t, b, "B", 10, time.Hour); len(got) != 0 {
		t.Fatalf("B claimed %v within a lease of the database's start, want none", got)
	}
	// With a lease shorter than the database has been up, the same
	// heartbeat is a dead instance's.
	claim(t, a, "A", 0, 200*time.Millisecond)
	if err := postgres.Exec(ctx, a, past); err != nil {
		t.Fatal(err)
	}
	waitDead(t, a, "x")
	if got := claim(t, b, "B", 10, time.Hour); !slices.Equal(got, []int64{1}) {
		t.Errorf("B took over %v, want [1]", got)
	}
}

// The hourly prune forgets what a dead instance left: the leases of its
// chats with nothing queued, then its heartbeat; a live instance's stay.
func TestPruneForgetsDeadInstances(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	a, b := instances(t)
	put(t, a, map[int64]string{1: "x", 2: "y"})
	if got := claim(t, a, "A", 1, time.Hour); !slices.Equal(got, []int64{1}) {
		t.Fatalf("A claimed %v, want [1]", got)
	}
	if got := claim(t, b, "B", 1, time.Hour); !slices.Equal(got, []int64{2}) {
		t.Fatalf("B claimed %v, want [2]", got)
	}
	// A's lease shortened only now: taken short at first, it could lapse
	// before B's claim on a loaded machine, and B took x (seen in make
	// test beside other work). Its heartbeat now lives 200ms; x's lease
	// row, taken for an hour, lives by it alone.
	claim(t, a, "A", 0, 200*time.Millisecond)
	if err := postgres.Exec(ctx, a, `UPDATE chat_leases SET expires_at = 0 WHERE owner = 'A'`); err != nil {
		t.Fatal(err)
	}
	// A finishes x and dies before its next claim would drop the lease.
	if err := a.InboxDone(ctx, 1); err != nil {
		t.Fatal(err)
	}
	waitDead(t, a, "x")
	if _, err := b.InboxPrune(ctx, time.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	if owner, _, err := b.LeaseOwner(ctx, "x"); err != nil || owner != "" {
		t.Errorf("lease of x after the prune: %q (%v), want none", owner, err)
	}
	if n := heartbeats(t, b, "A"); n != 0 {
		t.Errorf("A's heartbeats after the prune: %d, want none", n)
	}
	if owner, live, err := b.LeaseOwner(ctx, "y"); err != nil || owner != "B" || !live {
		t.Errorf("lease of y after the prune: %q live %v (%v), want B's", owner, live, err)
	}
	if n := heartbeats(t, b, "B"); n != 1 {
		t.Errorf("B's heartbeats after the prune: %d, want 1", n)
	}
}

// A lease taken before migration 0023, by an instance of a version that
// renewed each lease on its own, lives to its expires_at as it did then:
// an upgraded instance takes the chat only once it has passed, so that a
// database upgraded under running instances moves no chat early.
func TestMigrationKeepsLeasesTakenBefore(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db := upgrade(t, "0023", func(old *postgres.DB) error {
		put(t, old, map[int64]string{1: "x"})
		return postgres.Exec(ctx, old, `INSERT INTO chat_leases (chat_id, owner, expires_at)
			VALUES ('x', 'old', (extract(epoch FROM clock_timestamp()) * 1000)::bigint + 3600000)`)
	})
	if owner, live, err := db.LeaseOwner(ctx, "x"); err != nil || owner != "old" || !live {
		t.Fatalf("lease of x after the upgrade: %q live %v err %v; want old's", owner, live, err)
	}
	if got := claim(t, db, "B", 10, time.Hour); len(got) != 0 {
		t.Fatalf("B claimed %v while old's lease runs, want none", got)
	}
	if err := postgres.Exec(ctx, db, `UPDATE chat_leases SET expires_at = 0 WHERE chat_id = 'x'`); err != nil {
		t.Fatal(err)
	}
	if got := claim(t, db, "B", 10, time.Hour); !slices.Equal(got, []int64{1}) {
		t.Errorf("B took over %v once old's lease ran out, want [1]", got)
	}
}
