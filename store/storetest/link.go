package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/store"
)

// Links are found by key from any handle and after a reopen, kept to the
// newest of each chat, and pruned once expired; a key stored twice keeps
// its first link.
func testLinks(t *testing.T, open Open) {
	ctx := t.Context()
	db := open(t)
	base := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	link := func(key, chat string, at time.Duration) store.Link {
		return store.Link{Key: key, ChatID: chat, UserID: "u-" + chat, Server: "files", URI: "file:///" + key,
			Name: "name " + key, CreatedAt: base.Add(at), ExpiresAt: base.Add(at + time.Hour)}
	}
	for i, l := range []store.Link{link("a", "c1", 0), link("b", "c1", time.Second), link("x", "c2", time.Second), link("c", "c1", 2*time.Second)} {
		if err := db.PutLink(ctx, l, 2); err != nil {
			t.Fatalf("PutLink %d: %v", i, err)
		}
	}
	if err := db.PutLink(ctx, store.Link{Key: "b", ChatID: "c1", UserID: "intruder", CreatedAt: base.Add(3 * time.Second)}, 2); err != nil {
		t.Fatalf("PutLink of a stored key: %v", err)
	}

	other := open(t) // a second handle, as another instance would have
	if _, err := other.GetLink(ctx, "a"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetLink of the oldest of c1's three links (keep 2) = %v, want ErrNotFound", err)
	}
	if _, err := other.GetLink(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetLink of an unknown key = %v, want ErrNotFound", err)
	}
	db = reopen(t, db, open)
	for _, want := range []store.Link{link("b", "c1", time.Second), link("c", "c1", 2*time.Second), link("x", "c2", time.Second)} {
		got, err := db.GetLink(ctx, want.Key)
		if err != nil {
			t.Fatalf("GetLink(%s) after a reopen: %v", want.Key, err)
		}
		if got != want {
			t.Errorf("GetLink(%s) = %+v, want %+v", want.Key, got, want)
		}
	}

	// Expired links stay readable until pruned; a chat's next link prunes
	// its own.
	if n, err := db.PruneLinks(ctx, base.Add(time.Hour+time.Second)); err != nil || n != 2 {
		t.Errorf("PruneLinks = %d, %v; want 2 (b and x)", n, err)
	}
	if _, err := db.GetLink(ctx, "b"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetLink of a pruned link = %v, want ErrNotFound", err)
	}
	if err := db.PutLink(ctx, link("d", "c1", 3*time.Hour), 10); err != nil {
		t.Fatal(err)
	}
	if _, err := db.GetLink(ctx, "c"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetLink of a link expired when its chat's next came = %v, want ErrNotFound", err)
	}
	if _, err := db.GetLink(ctx, "d"); err != nil {
		t.Errorf("GetLink(d): %v", err)
	}
}
