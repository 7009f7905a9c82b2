package dispatch_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/dispatch"
	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/store/postgres"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// sharedInbox opens n handles on one new PostgreSQL database: the stores
// of n instances.
func sharedInbox(t *testing.T, n int) []*postgres.DB {
	t.Helper()
	dsn := testenv.Postgres(t)
	var dbs []*postgres.DB
	for range n {
		db, err := postgres.Open(context.Background(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		dbs = append(dbs, db)
	}
	return dbs
}

// A ledger records which instance ran which item, and checks that the
// items of one chat never run at the same time.
type ledger struct {
	t       *testing.T
	mu      sync.Mutex
	ran     map[string][]int64 // chat -> ids in the order they started
	by      map[int64][]string // id -> instances that ran it
	running map[string]bool    // chat -> a job of it is running
}

func newLedger(t *testing.T) *ledger {
	return &ledger{t: t, ran: map[string][]int64{}, by: map[int64][]string{}, running: map[string]bool{}}
}

func (l *ledger) route(instance string, hold func(context.Context, store.InboxItem)) func(store.InboxItem) dispatch.Job {
	return func(it store.InboxItem) dispatch.Job {
		return dispatch.Job{Lane: it.ChatID, Run: func(ctx context.Context) {
			l.mu.Lock()
			if l.running[it.ChatID] {
				l.t.Errorf("chat %s: item %d started while another of the chat ran", it.ChatID, it.UpdateID)
			}
			l.running[it.ChatID] = true
			l.ran[it.ChatID] = append(l.ran[it.ChatID], it.UpdateID)
			l.by[it.UpdateID] = append(l.by[it.UpdateID], instance)
			l.mu.Unlock()
			if hold != nil {
				hold(ctx, it)
			}
			l.mu.Lock()
			l.running[it.ChatID] = false
			l.mu.Unlock()
		}}
	}
}

func (l *ledger) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.by)
}

// Two instances share one inbox: every item runs once, each chat's in
// order and one at a time, and both instances get work.
func TestSharedInboxTwoInstances(t *testing.T) {
	dbs := sharedInbox(t, 2)
	l := newLedger(t)
	var queues []*dispatch.Queue
	// Jobs wait until both instances run one: an instance holds at most
	// MaxRunning chats with work, so it cannot take them all, and the
	// other must get some.
	var started [2]sync.Once
	var both sync.WaitGroup
	both.Add(2)
	for i, db := range dbs {
		name := fmt.Sprintf("i%d", i)
		queues = append(queues, start(t, db, l.route(name, func(context.Context, store.InboxItem) {
			started[i].Do(both.Done)
			both.Wait()
		}), dispatch.Options{Leases: db, Instance: name, MaxRunning: 4, LeaseFor: time.Minute}))
	}
	const chats, perChat = 20, 5
	id := int64(0)
	for round := range perChat {
		var items []store.InboxItem
		for c := range chats {
			id++
			items = append(items, store.InboxItem{UpdateID: id, ChatID: fmt.Sprint("c", c), Payload: []byte(`{}`)})
		}
		db := dbs[round%2] // the webhook lands on either instance
		if err := db.InboxPut(context.Background(), items...); err != nil {
			t.Fatal(err)
		}
		for _, q := range queues {
			q.Wake()
		}
	}
	waitFor(t, func() bool { return l.count() == chats*perChat })
	for _, q := range queues {
		closeQueue(t, q)
	}
	instances := map[string]int{}
	for id, by := range l.by {
		if len(by) != 1 {
			t.Errorf("item %d ran %d times, on %v", id, len(by), by)
		}
		instances[by[0]]++
	}
	for chat, ids := range l.ran {
		if !slices.IsSorted(ids) {
			t.Errorf("chat %s ran out of order: %v", chat, ids)
		}
	}
	if len(instances) != 2 {
		t.Errorf("items per instance: %v; want both to work", instances)
	}
	if n, _, err := dbs[0].InboxBacklog(context.Background()); err != nil || n != 0 {
		t.Errorf("backlog after the run: %d (%v), want 0", n, err)
	}
}

// An instance that claimed a chat and died leaves it to another once its
// lease expires: the other runs every item of the chat not marked done,
// the one that was running included, in order.
func TestSharedInboxTakeover(t *testing.T) {
	dbs := sharedInbox(t, 2)
	ctx := context.Background()
	put(t, dbs[0], "x", "x", "y")
	// The dead instance: it claimed x for a short lease and never came back.
	got, err := dbs[0].ClaimQueued(ctx, store.Claim{Instance: "dead", NewChats: 1, LeaseFor: 500 * time.Millisecond})
	if err != nil || len(got) != 2 {
		t.Fatalf("dead instance claimed %v (%v), want updates 1 and 2", got, err)
	}
	l := newLedger(t)
	q := start(t, dbs[1], l.route("alive", nil), dispatch.Options{Leases: dbs[1], Instance: "alive", LeaseFor: 300 * time.Millisecond})
	defer closeQueue(t, q)
	waitFor(t, func() bool { return l.count() == 3 })
	if got := l.ran["x"]; !slices.Equal(got, []int64{1, 2}) {
		t.Errorf("chat x ran %v, want [1 2]", got)
	}
	if owner, _, err := dbs[1].LeaseOwner(ctx, "x"); err != nil || owner == "dead" {
		t.Errorf("lease of x after the takeover: %q (%v)", owner, err)
	}
}

// Leases are what a queue shares the inbox by, not the kind of store:
// over PostgreSQL without Options.Leases it owns the whole inbox, runs the
// chat another instance holds a lease on, and takes no lease itself.
func TestSharedInboxWithoutLeases(t *testing.T) {
	db := sharedInbox(t, 1)[0]
	ctx := context.Background()
	put(t, db, "x", "y")
	if got, err := db.ClaimQueued(ctx, store.Claim{Instance: "other", NewChats: 1, LeaseFor: time.Hour}); err != nil || len(got) != 1 || got[0].ChatID != "x" {
		t.Fatalf("the other instance claimed %v (%v), want chat x", got, err)
	}
	l := newLedger(t)
	q := start(t, db, l.route("alone", nil), dispatch.Options{Instance: "alone"})
	defer closeQueue(t, q)
	if name := q.Instance(); name != "" {
		t.Errorf("Instance() = %q, want \"\": the queue owns the whole inbox", name)
	}
	waitFor(t, func() bool { return l.count() == 2 })
	for chat, want := range map[string]string{"x": "other", "y": ""} {
		if owner, _, err := db.LeaseOwner(ctx, chat); err != nil || owner != want {
			t.Errorf("lease of %s: %q (%v), want %q", chat, owner, err, want)
		}
	}
}

// Close hands the chats back: what the instance left queued goes to
// another at once, not after its lease (an hour here) expires.
func TestSharedInboxCloseHandsBack(t *testing.T) {
	dbs := sharedInbox(t, 2)
	ctx := context.Background()
	put(t, dbs[0], "x", "x")
	l := newLedger(t)
	started := make(chan struct{})
	first := start(t, dbs[0], l.route("first", func(ctx context.Context, it store.InboxItem) {
		close(started)
		<-ctx.Done() // runs until Close cuts it short
	}), dispatch.Options{Leases: dbs[0], Instance: "first", LeaseFor: time.Hour})
	<-started
	cut, cancel := context.WithCancel(ctx)
	cancel()
	if err := first.Close(cut); !errors.Is(err, dispatch.ErrCutShort) {
		t.Fatalf("Close: %v, want ErrCutShort", err)
	}
	second := start(t, dbs[1], l.route("second", nil), dispatch.Options{Leases: dbs[1], Instance: "second", LeaseFor: time.Hour})
	defer closeQueue(t, second)
	waitFor(t, func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return len(l.by[2]) == 1
	})
	l.mu.Lock()
	defer l.mu.Unlock()
	if got, want := l.by[1], []string{"first", "second"}; !slices.Equal(got, want) {
		t.Errorf("item 1 ran on %v, want %v (cut short, then again)", got, want)
	}
	if got, want := l.by[2], []string{"second"}; !slices.Equal(got, want) {
		t.Errorf("item 2 ran on %v, want %v", got, want)
	}
}

// An instance that lost a chat's lease (it could not renew in time, and
// another took the chat) drops the chat's queued items rather than run
// them beside the new owner; the one it was running finishes.
func TestSharedInboxLostLeaseDropsQueued(t *testing.T) {
	dbs := sharedInbox(t, 2)
	ctx := context.Background()
	put(t, dbs[0], "x", "x", "x")
	l := newLedger(t)
	started, release := make(chan struct{}), make(chan struct{})
	logs := &testenv.Buffer{}
	slow := start(t, dbs[0], l.route("slow", func(_ context.Context, it store.InboxItem) {
		if it.UpdateID == 1 {
			close(started)
			<-release
		}
	}), dispatch.Options{Leases: dbs[0], Instance: "slow", LeaseFor: time.Hour, Interval: time.Hour, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	<-started
	// The lease goes to another instance behind slow's back.
	if err := dbs[1].ReleaseLeases(ctx, "slow"); err != nil {
		t.Fatal(err)
	}
	if got, err := dbs[1].ClaimQueued(ctx, store.Claim{Instance: "thief", NewChats: 1, LeaseFor: time.Hour}); err != nil || len(got) != 3 {
		t.Fatalf("thief claimed %v (%v), want the 3 updates", got, err)
	}
	slow.Wake()
	waitFor(t, func() bool { return strings.Contains(logs.String(), "lost the lease") })
	close(release)
	closeQueue(t, slow)
	l.mu.Lock()
	defer l.mu.Unlock()
	if got := l.ran["x"]; !slices.Equal(got, []int64{1}) {
		t.Errorf("slow ran %v after losing the chat, want only [1], which was running", got)
	}
}

// A chat's items may take several lanes (a forum's topics): they run
// beside each other, each lane in order, all on the instance holding the
// chat's lease.
func TestSharedInboxLanesOfOneChat(t *testing.T) {
	dbs := sharedInbox(t, 2)
	var mu sync.Mutex
	ran := map[string][]int64{} // lane -> ids in the order they started
	by := map[string]bool{}     // instances that ran an item
	bStarted := make(chan struct{})
	var once sync.Once
	route := func(instance string) func(store.InboxItem) dispatch.Job {
		return func(it store.InboxItem) dispatch.Job {
			lane := it.ChatID + "/" + string(it.Payload)
			return dispatch.Job{Lane: lane, Run: func(ctx context.Context) {
				mu.Lock()
				ran[lane] = append(ran[lane], it.UpdateID)
				by[instance] = true
				mu.Unlock()
				switch it.UpdateID {
				case 1: // holds lane a until lane b runs
					select {
					case <-bStarted:
					case <-ctx.Done():
					}
				case 2:
					once.Do(func() { close(bStarted) })
				}
			}}
		}
	}
	var queues []*dispatch.Queue
	for i, db := range dbs {
		name := fmt.Sprintf("i%d", i)
		queues = append(queues, start(t, db, route(name), dispatch.Options{Leases: db, Instance: name, LeaseFor: time.Minute}))
	}
	var items []store.InboxItem
	for i, lane := range []string{"a", "b", "a", "b"} {
		items = append(items, store.InboxItem{UpdateID: int64(i + 1), ChatID: "forum", Payload: []byte(lane)})
	}
	if err := dbs[0].InboxPut(context.Background(), items...); err != nil {
		t.Fatal(err)
	}
	for _, q := range queues {
		q.Wake()
	}
	waitFor(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(ran["forum/a"])+len(ran["forum/b"]) == 4
	})
	for _, q := range queues {
		closeQueue(t, q)
	}
	if got, want := ran["forum/a"], []int64{1, 3}; !slices.Equal(got, want) {
		t.Errorf("lane a ran %v, want %v", got, want)
	}
	if got, want := ran["forum/b"], []int64{2, 4}; !slices.Equal(got, want) {
		t.Errorf("lane b ran %v, want %v", got, want)
	}
	if len(by) != 1 {
		t.Errorf("the chat's items ran on %v, want the one instance holding its lease", by)
	}
}
