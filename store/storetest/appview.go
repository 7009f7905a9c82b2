package storetest

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/store"
)

// App views are found by ID from any handle and after a reopen, with
// their input and result byte for byte (none kept stays none), kept to
// the newest of each chat, refused whole past their bounds, and pruned
// once expired; an ID stored twice keeps its first view.
func testAppViews(t *testing.T, open Open) {
	ctx := t.Context()
	db := open(t)
	base := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	view := func(id, chat string, at time.Duration) store.AppView {
		return store.AppView{ID: id, ChatID: chat, UserID: "u-" + chat, Server: "apps", Tool: "show", ResourceURI: "ui://apps/" + id,
			Title: "Show " + id, Input: []byte(`{"n":1,"s":"é\u0000"}`), Result: []byte(`{"content":[{"type":"text","text":"` + id + `"}]}`),
			CreatedAt: base.Add(at), ExpiresAt: base.Add(at + time.Hour)}
	}
	bare := view("x", "c2", time.Second)
	bare.Input, bare.Result = nil, nil
	for i, v := range []store.AppView{view("a", "c1", 0), view("b", "c1", time.Second), bare, view("c", "c1", 2*time.Second)} {
		if err := db.PutAppView(ctx, v, 2); err != nil {
			t.Fatalf("PutAppView %d: %v", i, err)
		}
	}
	if err := db.PutAppView(ctx, store.AppView{ID: "b", ChatID: "c1", UserID: "intruder", CreatedAt: base.Add(3 * time.Second)}, 2); err != nil {
		t.Fatalf("PutAppView of a stored ID: %v", err)
	}
	for name, v := range map[string]store.AppView{
		"input":  {ID: "big", ChatID: "c3", Input: bytes.Repeat([]byte("x"), store.MaxAppInput+1)},
		"result": {ID: "big", ChatID: "c3", Result: bytes.Repeat([]byte("x"), store.MaxAppResult+1)},
		"title":  {ID: "big", ChatID: "c3", Title: string(bytes.Repeat([]byte("x"), 4096))},
		"id":     {ID: string(bytes.Repeat([]byte("x"), 65)), ChatID: "c3"},
	} {
		if err := db.PutAppView(ctx, v, 2); !errors.Is(err, store.ErrTooLarge) {
			t.Errorf("PutAppView with a %s past its bound = %v, want ErrTooLarge", name, err)
		}
	}
	if _, err := db.GetAppView(ctx, "big"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetAppView of a view refused as too large = %v, want ErrNotFound", err)
	}

	other := open(t) // a second handle, as another instance would have
	if _, err := other.GetAppView(ctx, "a"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetAppView of the oldest of c1's three views (keep 2) = %v, want ErrNotFound", err)
	}
	db = reopen(t, db, open)
	for _, want := range []store.AppView{view("b", "c1", time.Second), view("c", "c1", 2*time.Second), bare} {
		got, err := db.GetAppView(ctx, want.ID)
		if err != nil {
			t.Fatalf("GetAppView(%s) after a reopen: %v", want.ID, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("GetAppView(%s) = %+v, want %+v", want.ID, got, want)
		}
	}

	// Expired views stay readable until pruned; a chat's next view
	// prunes its own.
	if n, err := db.PruneAppViews(ctx, base.Add(time.Hour+time.Second)); err != nil || n != 2 {
		t.Errorf("PruneAppViews = %d, %v; want 2 (b and x)", n, err)
	}
	if _, err := db.GetAppView(ctx, "b"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetAppView of a pruned view = %v, want ErrNotFound", err)
	}
	if err := db.PutAppView(ctx, view("d", "c1", 3*time.Hour), 10); err != nil {
		t.Fatal(err)
	}
	if _, err := db.GetAppView(ctx, "c"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetAppView of a view expired when its chat's next came = %v, want ErrNotFound", err)
	}
}

// An app's context is kept per chat, the newest in place of the one
// before, taken once by any handle (after a reopen too) and then gone;
// an empty one clears it; one past its time is not given, and is pruned;
// one past its bounds is refused.
func testAppContexts(t *testing.T, open Open) {
	ctx := t.Context()
	db := open(t)
	base := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	kept := func(chat, text string, at time.Duration) store.AppContext {
		return store.AppContext{ChatID: chat, UserID: "u-" + chat, Title: "Budget", Text: text,
			CreatedAt: base.Add(at), ExpiresAt: base.Add(at + time.Hour)}
	}
	for _, c := range []store.AppContext{kept("c1", "first", 0), kept("c1", "sum: 42 é", time.Second), kept("c2", "other", 0),
		kept("c3", "cleared", 0), {ChatID: "c3"}, kept("old", "stale", -2*time.Hour)} {
		if err := db.PutAppContext(ctx, c); err != nil {
			t.Fatalf("PutAppContext(%s): %v", c.ChatID, err)
		}
	}
	huge := kept("c4", string(bytes.Repeat([]byte("x"), store.MaxAppContext+1)), 0)
	if err := db.PutAppContext(ctx, huge); !errors.Is(err, store.ErrTooLarge) {
		t.Errorf("PutAppContext of %d bytes: %v, want ErrTooLarge", len(huge.Text), err)
	}
	db = reopen(t, db, open)
	other := open(t)
	now := base.Add(2 * time.Second)
	if got, err := other.TakeAppContext(ctx, "c1", now); err != nil || !reflect.DeepEqual(got, kept("c1", "sum: 42 é", time.Second)) {
		t.Errorf("TakeAppContext(c1) = %+v, %v; want the newest", got, err)
	}
	for _, chat := range []string{"c1", "c3", "c4", "old", "nobody"} {
		if got, err := db.TakeAppContext(ctx, chat, now); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("TakeAppContext(%s) = %+v, %v; want ErrNotFound", chat, got, err)
		}
	}
	if n, err := db.PruneAppViews(ctx, base.Add(2*time.Hour)); err != nil || n != 1 {
		t.Errorf("PruneAppViews = %d, %v; want c2's context pruned", n, err)
	}
	if _, err := db.TakeAppContext(ctx, "c2", now); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("TakeAppContext(c2) after the prune: %v, want ErrNotFound", err)
	}
}
