package storetest

import (
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/store"
)

func testPendingLifecycle(t *testing.T, open Open) {
	ctx := t.Context()
	db := open(t)
	conv := Active(t, db, "c1")
	if _, err := db.OpenPending(ctx, "c1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("OpenPending with none = %v, want ErrNotFound", err)
	}

	expires := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	q := store.Pending{ChatID: "c1", UserID: "u1", ConversationID: conv, Kind: store.KindQuestion, Payload: `{"q":1}`}
	qID, err := db.CreatePending(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	a := store.Pending{ChatID: "c1", UserID: "u1", ConversationID: conv, Kind: store.KindApproval, Payload: `{"a":1}`, ExpiresAt: expires}
	aID, err := db.CreatePending(ctx, a)
	if err != nil {
		t.Fatal(err)
	}

	// The approval superseded the question.
	cur, err := db.OpenPending(ctx, "c1")
	if err != nil {
		t.Fatal(err)
	}
	if cur.ID != aID || cur.Kind != store.KindApproval || cur.Payload != `{"a":1}` ||
		cur.UserID != "u1" || cur.ConversationID != conv || !cur.ExpiresAt.Equal(expires) || !cur.IsOpen() {
		t.Errorf("OpenPending = %+v, want the approval %d", cur, aID)
	}
	old, err := db.GetPending(ctx, qID)
	if err != nil {
		t.Fatal(err)
	}
	if old.IsOpen() || old.Resolution != store.ResolutionSuperseded {
		t.Errorf("earlier question = %+v, want resolved as superseded", old)
	}
	if !old.ExpiresAt.IsZero() {
		t.Errorf("question without expiry has ExpiresAt %v, want zero", old.ExpiresAt)
	}
	if err := db.ResolvePending(ctx, qID, "answered", ""); !errors.Is(err, store.ErrResolved) {
		t.Errorf("answering the superseded question = %v, want ErrResolved", err)
	}

	// Survives a restart.
	db = reopen(t, db, open)
	if err := db.ResolvePending(ctx, aID, "approved", "00000000000004d2"); err != nil {
		t.Fatalf("ResolvePending: %v", err)
	}
	if err := db.ResolvePending(ctx, aID, "denied", "00000000000004d3"); !errors.Is(err, store.ErrResolved) {
		t.Errorf("second ResolvePending = %v, want ErrResolved", err)
	}
	got, err := db.GetPending(ctx, aID)
	if err != nil {
		t.Fatal(err)
	}
	if got.IsOpen() || got.Resolution != "approved" || got.ResolvedBy != "00000000000004d2" || got.ResolvedAt.Location() != time.UTC {
		t.Errorf("resolved approval = %+v, want resolution approved by turn 00000000000004d2 (the first press)", got)
	}
	if old.ResolvedBy != "" {
		t.Errorf("the question superseded by a new one = %+v, want resolved by no turn", old)
	}
	if _, err := db.OpenPending(ctx, "c1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("OpenPending after resolve = %v, want ErrNotFound", err)
	}
	if _, err := db.GetPending(ctx, 12345); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetPending(unknown) = %v, want ErrNotFound", err)
	}
	if err := db.ResolvePending(ctx, 12345, "x", ""); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("ResolvePending(unknown) = %v, want ErrNotFound", err)
	}
}

func testPendingChatsAreIndependent(t *testing.T, open Open) {
	ctx := t.Context()
	db := open(t)
	// No conversation: ConversationID zero is allowed, and the chat is
	// created on the fly.
	id1, err := db.CreatePending(ctx, store.Pending{ChatID: "c1", UserID: "u", Kind: store.KindQuestion, Payload: "{}"})
	if err != nil {
		t.Fatal(err)
	}
	id2, err := db.CreatePending(ctx, store.Pending{ChatID: "c2", UserID: "u", Kind: store.KindQuestion, Payload: "{}"})
	if err != nil {
		t.Fatal(err)
	}
	for chat, want := range map[string]int64{"c1": id1, "c2": id2} {
		p, err := db.OpenPending(ctx, chat)
		if err != nil || p.ID != want || p.ConversationID != 0 {
			t.Errorf("OpenPending(%s) = %+v, %v; want id %d", chat, p, err, want)
		}
	}
}

func testPendingBadKind(t *testing.T, open Open) {
	db := open(t)
	if _, err := db.CreatePending(t.Context(), store.Pending{ChatID: "c", Kind: "poll"}); err == nil {
		t.Error("CreatePending with kind poll: got nil error, want one")
	}
}

func testResolvePendingDoublePress(t *testing.T, open Open) {
	ctx := t.Context()
	db := open(t)
	other := open(t) // a press reaching another instance
	id, err := db.CreatePending(ctx, store.Pending{ChatID: "c", UserID: "u", Kind: store.KindApproval, Payload: "{}"})
	if err != nil {
		t.Fatal(err)
	}
	const presses = 16
	errs := make([]error, presses)
	var wg sync.WaitGroup
	for i := range presses {
		h := db
		if i%2 == 1 {
			h = other
		}
		wg.Go(func() { errs[i] = h.ResolvePending(ctx, id, "approved", "") })
	}
	wg.Wait()
	var ok, resolved int
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case errors.Is(err, store.ErrResolved):
			resolved++
		default:
			t.Errorf("ResolvePending: %v", err)
		}
	}
	if ok != 1 || resolved != presses-1 {
		t.Errorf("%d presses: %d resolved it, %d got ErrResolved; want 1 and %d", presses, ok, resolved, presses-1)
	}
}

func testExpiredPending(t *testing.T, open Open) {
	ctx := t.Context()
	db := open(t)
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	create := func(chat string, expires time.Time) int64 {
		t.Helper()
		id, err := db.CreatePending(ctx, store.Pending{ChatID: chat, UserID: "u", Kind: store.KindApproval, Payload: "{}", ExpiresAt: expires})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	late := create("late", now.Add(-time.Minute))
	early := create("early", now.Add(-time.Hour))
	exact := create("exact", now)
	create("future", now.Add(time.Minute))
	create("never", time.Time{})
	resolved := create("resolved", now.Add(-2*time.Hour))
	if err := db.ResolvePending(ctx, resolved, "denied", ""); err != nil {
		t.Fatal(err)
	}
	create("superseded", now.Add(-3*time.Hour))
	create("superseded", now.Add(time.Hour)) // supersedes the expired one

	got, err := db.ExpiredPending(ctx, now)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, p := range got {
		ids = append(ids, p.ID)
		if !p.IsOpen() {
			t.Errorf("ExpiredPending returned resolved %+v", p)
		}
	}
	want := []int64{early, late, exact}
	if !slices.Equal(ids, want) {
		t.Errorf("ExpiredPending ids = %v, want %v (soonest expired first)", ids, want)
	}
	// ExpiredPending does not resolve; the caller does, once.
	if err := db.ResolvePending(ctx, early, "expired", ""); err != nil {
		t.Fatal(err)
	}
	if got, err := db.ExpiredPending(ctx, now); err != nil || len(got) != 2 {
		t.Errorf("after resolving one, ExpiredPending = %d items, %v; want 2", len(got), err)
	}
}
