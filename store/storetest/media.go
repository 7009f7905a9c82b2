package storetest

import (
	"bytes"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/store"
)

// Images are stored once by content, read back by reference after a
// reopen (as another instance would), named by messages, and deleted by
// the retention limit; what is not a reference finds nothing.
func testMedia(t *testing.T, open Open) {
	ctx := t.Context()
	db := open(t)
	img := []byte("\x89PNG\r\n\x1a\n an image")
	ref, err := db.MediaPut(ctx, "image/png", img)
	if err != nil {
		t.Fatal(err)
	}
	if ref != store.MediaHash(img) || !store.ValidMediaHash(ref) {
		t.Fatalf("MediaPut = %q, want the content's hash %q", ref, store.MediaHash(img))
	}
	if again, err := db.MediaPut(ctx, "image/png", img); err != nil || again != ref {
		t.Errorf("MediaPut of the same bytes = %q, %v; want %q", again, err, ref)
	}
	other, err := db.MediaPut(ctx, "image/jpeg", []byte("\xff\xd8\xff another"))
	if err != nil {
		t.Fatal(err)
	}
	conv := Active(t, db, "chat")
	if err := AppendMessages(ctx, db, conv,
		store.Message{Role: "user", Content: "two photos", Media: []string{ref, other}},
		store.Message{Role: "assistant", Content: "seen"}); err != nil {
		t.Fatal(err)
	}

	db = reopen(t, db, open)
	m, err := db.MediaGet(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(m.Data, img) || m.MIMEType != "image/png" || m.Hash != ref || time.Since(m.StoredAt) > time.Minute {
		t.Errorf("MediaGet = %+v", m)
	}
	msgs, err := db.Messages(ctx, conv)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 || !slices.Equal(msgs[0].Media, []string{ref, other}) || msgs[1].Media != nil {
		t.Errorf("the messages' media = %q and %q, want [%s %s] and none", msgs[0].Media, msgs[1].Media, ref, other)
	}

	for _, bad := range []string{"", "../../../etc/passwd", "..", "/etc/passwd", ref[:63] + "/", ref + "0", "0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF"} {
		if _, err := db.MediaGet(ctx, bad); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("MediaGet(%q) = %v, want ErrNotFound", bad, err)
		}
	}

	// Nothing is older than an hour ago; everything is older than a
	// minute from now.
	if n, err := db.MediaPrune(ctx, time.Now().Add(-time.Hour)); err != nil || n != 0 {
		t.Errorf("MediaPrune of none = %d, %v; want 0", n, err)
	}
	if _, err := db.MediaGet(ctx, ref); err != nil {
		t.Errorf("MediaGet after pruning older ones: %v", err)
	}
	if n, err := db.MediaPrune(ctx, time.Now().Add(time.Minute)); err != nil || n != 2 {
		t.Errorf("MediaPrune = %d, %v; want 2", n, err)
	}
	for _, r := range []string{ref, other} {
		if _, err := db.MediaGet(ctx, r); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("MediaGet of a pruned image = %v, want ErrNotFound", err)
		}
	}
	// The messages still name them: the history says they are gone.
	if msgs, err := db.Messages(ctx, conv); err != nil || len(msgs[0].Media) != 2 {
		t.Errorf("messages after pruning: %+v, %v", msgs, err)
	}
	// Stored again, an image is kept again.
	if _, err := db.MediaPut(ctx, "image/png", img); err != nil {
		t.Fatal(err)
	}
	if m, err := db.MediaGet(ctx, ref); err != nil || !bytes.Equal(m.Data, img) {
		t.Errorf("MediaGet after storing again: %v", err)
	}
}

// InboxQueuedChat returns one chat's unprocessed items in update order.
func testInboxQueuedChat(t *testing.T, open Open) {
	ctx := t.Context()
	db := open(t)
	for id := int64(1); id <= 9; id++ {
		if err := db.InboxPut(ctx, Item(id)); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.InboxDone(ctx, 4); err != nil {
		t.Fatal(err)
	}
	got, err := db.InboxQueuedChat(ctx, "chat1", 0)
	if err != nil {
		t.Fatal(err)
	}
	if ids := UpdateIDs(got); !slices.Equal(ids, []int64{1, 7}) {
		t.Errorf("InboxQueuedChat(chat1) = %v, want [1 7]", ids)
	}
	if got, err := db.InboxQueuedChat(ctx, "chat2", 2); err != nil || !slices.Equal(UpdateIDs(got), []int64{2, 5}) {
		t.Errorf("InboxQueuedChat(chat2, 2) = %v, %v; want [2 5]", UpdateIDs(got), err)
	}
	if got, err := db.InboxQueuedChat(ctx, "nobody", 0); err != nil || len(got) != 0 {
		t.Errorf("InboxQueuedChat(nobody) = %v, %v; want none", got, err)
	}
}
