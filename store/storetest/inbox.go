package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/store"
)

// Item is an update of id, in one of three chats, holding its id.
func Item(id int64) store.InboxItem {
	return store.InboxItem{UpdateID: id, ChatID: fmt.Sprint("chat", id%3), Payload: fmt.Appendf(nil, `{"update_id":%d}`, id)}
}

// UpdateIDs returns the update ids of items, in order.
func UpdateIDs(items []store.InboxItem) []int64 {
	var ids []int64
	for _, it := range items {
		ids = append(ids, it.UpdateID)
	}
	return ids
}

func testInbox(t *testing.T, open Open) {
	ctx := t.Context()
	db := open(t)
	if maxID, err := db.InboxMaxUpdateID(ctx); err != nil || maxID != 0 {
		t.Fatalf("InboxMaxUpdateID on empty inbox = %d, %v; want 0", maxID, err)
	}

	// Out of order, with duplicates inside a batch and across batches.
	if err := db.InboxPut(ctx, Item(12), Item(10), Item(11), Item(10)); err != nil {
		t.Fatal(err)
	}
	changed := Item(11)
	changed.Payload = []byte(`{"changed":true}`)
	if err := db.InboxPut(ctx, changed, Item(13)); err != nil {
		t.Fatal(err)
	}
	if err := db.InboxPut(ctx); err != nil {
		t.Errorf("InboxPut with none: %v", err)
	}

	got, err := queued(ctx, db, 0)
	if err != nil {
		t.Fatal(err)
	}
	if ids := UpdateIDs(got); !slices.Equal(ids, []int64{10, 11, 12, 13}) {
		t.Fatalf("queued ids = %v, want [10 11 12 13]", ids)
	}
	if string(got[1].Payload) != `{"update_id":11}` {
		t.Errorf("a duplicate replaced the payload: got %s", got[1].Payload)
	}
	if got[0].ChatID != "chat1" || got[0].ReceivedAt.Location() != time.UTC || time.Since(got[0].ReceivedAt) > time.Minute {
		t.Errorf("item 10 = %+v, want chat1 received about now in UTC", got[0])
	}

	if err := db.InboxDone(ctx, 10); err != nil {
		t.Fatal(err)
	}
	if err := db.InboxDone(ctx, 10); err != nil {
		t.Errorf("InboxDone twice: %v, want nil", err)
	}
	if err := db.InboxDone(ctx, 12); err != nil {
		t.Fatal(err)
	}
	if err := db.InboxDone(ctx, 99); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("InboxDone(unknown) = %v, want ErrNotFound", err)
	}
	// A processed update sent again stays processed.
	if err := db.InboxPut(ctx, Item(10)); err != nil {
		t.Fatal(err)
	}

	// Everything survives a restart.
	db = reopen(t, db, open)
	got, err = queued(ctx, db, 1)
	if err != nil {
		t.Fatal(err)
	}
	if ids := UpdateIDs(got); !slices.Equal(ids, []int64{11}) {
		t.Errorf("queued(1) after reopen = %v, want [11]", ids)
	}
	got, err = queued(ctx, db, 10)
	if err != nil {
		t.Fatal(err)
	}
	if ids := UpdateIDs(got); !slices.Equal(ids, []int64{11, 13}) {
		t.Errorf("queued after reopen = %v, want [11 13]", ids)
	}
	if maxID, err := db.InboxMaxUpdateID(ctx); err != nil || maxID != 13 {
		t.Errorf("InboxMaxUpdateID = %d, %v; want 13", maxID, err)
	}
	// Processed ones count for the max too.
	if err := db.InboxDone(ctx, 13); err != nil {
		t.Fatal(err)
	}
	if maxID, err := db.InboxMaxUpdateID(ctx); err != nil || maxID != 13 {
		t.Errorf("InboxMaxUpdateID after done = %d, %v; want 13", maxID, err)
	}
}

func testInboxEmptyPayloadAndChat(t *testing.T, open Open) {
	ctx := t.Context()
	db := open(t)
	if err := db.InboxPut(ctx, store.InboxItem{UpdateID: 1}); err != nil {
		t.Fatalf("InboxPut without chat or payload: %v", err)
	}
	got, err := queued(ctx, db, 0)
	if err != nil || len(got) != 1 || got[0].ChatID != "" || len(got[0].Payload) != 0 {
		t.Errorf("queued = %+v, %v; want one empty item", got, err)
	}
}

func testInboxQueued(t *testing.T, open Open) {
	ctx := t.Context()
	db := open(t)
	if err := db.InboxPut(ctx, Item(10), Item(11), Item(12), Item(13), Item(14), Item(15)); err != nil {
		t.Fatal(err)
	}
	if err := db.InboxDone(ctx, 12, 14); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		after int64
		limit int
		want  []int64
	}{
		{0, 0, []int64{10, 11, 13, 15}},
		{10, 0, []int64{11, 13, 15}},
		{11, 0, []int64{13, 15}},
		{11, 1, []int64{13}},
		{12, 2, []int64{13, 15}},
		{15, 0, nil},
		{99, 10, nil},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("after %d limit %d", tt.after, tt.limit), func(t *testing.T) {
			got, err := db.InboxQueued(ctx, tt.after, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			if ids := UpdateIDs(got); !slices.Equal(ids, tt.want) {
				t.Errorf("InboxQueued(%d, %d) = %v, want %v", tt.after, tt.limit, ids, tt.want)
			}
			if len(got) > 0 && string(got[0].Payload) != fmt.Sprintf(`{"update_id":%d}`, got[0].UpdateID) {
				t.Errorf("payload of %d: got %s", got[0].UpdateID, got[0].Payload)
			}
		})
	}
}

func testInboxPrune(t *testing.T, open Open) {
	ctx := t.Context()
	db := open(t)
	old := time.Now().Add(-48 * time.Hour)
	var items []store.InboxItem
	for id := int64(1); id <= 4; id++ {
		it := Item(id)
		it.ReceivedAt = old
		items = append(items, it)
	}
	if err := db.InboxPut(ctx, items...); err != nil {
		t.Fatal(err)
	}
	for _, id := range []int64{1, 2, 4} {
		if err := db.InboxDone(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	n, err := db.InboxPrune(ctx, time.Now().Add(-24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	// 1 and 2 go; 3 is not processed; 4 is the newest and keeps the offset.
	if n != 2 {
		t.Errorf("InboxPrune deleted %d, want 2", n)
	}
	if maxID, err := db.InboxMaxUpdateID(ctx); err != nil || maxID != 4 {
		t.Errorf("InboxMaxUpdateID after prune = %d, %v; want 4", maxID, err)
	}
	if got, err := queued(ctx, db, 0); err != nil || !slices.Equal(UpdateIDs(got), []int64{3}) {
		t.Errorf("queued after prune = %v, %v; want [3]", UpdateIDs(got), err)
	}
}

func testInboxDoneMany(t *testing.T, open Open) {
	ctx := t.Context()
	db := open(t)
	if err := db.InboxPut(ctx, Item(1), Item(2), Item(3), Item(4), Item(5)); err != nil {
		t.Fatal(err)
	}
	queuedIDs := func() []int64 {
		t.Helper()
		got, err := queued(ctx, db, 0)
		if err != nil {
			t.Fatal(err)
		}
		return UpdateIDs(got)
	}
	if err := db.InboxDone(ctx); err != nil {
		t.Errorf("InboxDone with none: %v", err)
	}
	if err := db.InboxDone(ctx, 1, 2, 3); err != nil {
		t.Fatal(err)
	}
	if got, want := queuedIDs(), []int64{4, 5}; !slices.Equal(got, want) {
		t.Errorf("queued after InboxDone(1, 2, 3) = %v, want %v", got, want)
	}
	// Unknown ids are reported; the known ones, done or not, are marked.
	err := db.InboxDone(ctx, 3, 99, 4, 98)
	if !errors.Is(err, store.ErrNotFound) {
		t.Errorf("InboxDone with unknown ids = %v, want ErrNotFound", err)
	}
	if err == nil || !strings.Contains(err.Error(), "[99 98]") {
		t.Errorf("InboxDone error %q, want it to name [99 98]", err)
	}
	if got, want := queuedIDs(), []int64{5}; !slices.Equal(got, want) {
		t.Errorf("queued after InboxDone(3, 99, 4, 98) = %v, want %v", got, want)
	}
}

func testInboxBacklog(t *testing.T, open Open) {
	ctx := context.Background()
	db := open(t)
	n, oldest, err := db.InboxBacklog(ctx)
	if err != nil || n != 0 || !oldest.IsZero() {
		t.Fatalf("empty inbox: %d, %v, %v", n, oldest, err)
	}
	first := time.UnixMilli(time.Now().Add(-time.Minute).UnixMilli())
	items := []store.InboxItem{
		{UpdateID: 1, ChatID: "1", Payload: []byte(`{}`), ReceivedAt: first},
		{UpdateID: 2, ChatID: "1", Payload: []byte(`{}`), ReceivedAt: first.Add(time.Second)},
		{UpdateID: 3, ChatID: "2", Payload: []byte(`{}`)},
	}
	if err := db.InboxPut(ctx, items...); err != nil {
		t.Fatal(err)
	}
	if err := db.InboxDone(ctx, 1); err != nil {
		t.Fatal(err)
	}
	n, oldest, err = db.InboxBacklog(ctx)
	if err != nil || n != 2 || !oldest.Equal(first.Add(time.Second)) {
		t.Errorf("InboxBacklog = %d, %v, %v; want 2, %v", n, oldest, err, first.Add(time.Second))
	}
}

// Two instances storing overlapping batches at once (Telegram sending a
// batch again, or a webhook retried to another instance), in any order,
// keep each update once, with no error.
func testInboxPutConcurrentDuplicates(t *testing.T, open Open) {
	ctx := t.Context()
	hs := []Store{open(t), open(t)}
	const putters = 8
	var wg sync.WaitGroup
	for i := range putters {
		wg.Go(func() {
			var batch []store.InboxItem
			for id := int64(1); id <= 20; id++ {
				batch = append(batch, Item(id+int64(i%4)))
			}
			if i%3 == 0 { // in any order: none waits for another in a cycle
				slices.Reverse(batch)
			}
			if err := hs[i%2].InboxPut(ctx, batch...); err != nil {
				t.Errorf("InboxPut: %v", err)
			}
		})
	}
	wg.Wait()
	got, err := queued(ctx, hs[0], 0)
	if err != nil {
		t.Fatal(err)
	}
	var want []int64
	for id := int64(1); id <= 23; id++ {
		want = append(want, id)
	}
	if ids := UpdateIDs(got); !slices.Equal(ids, want) {
		t.Errorf("queued = %v, want %v", ids, want)
	}
}
