package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/store/sqlite"
	"github.com/mcpgram/mcpgram/store/storetest"
)

// The inbox commits at synchronous=FULL and every other write at NORMAL.
func TestInboxSynchronous(t *testing.T) {
	ctx := t.Context()
	db, _ := open(t)
	const normal, full = 1, 2
	check := func(when string) {
		t.Helper()
		v, err := sqlite.WriterSynchronous(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		if v != normal {
			t.Errorf("writer synchronous %s = %d, want %d (NORMAL)", when, v, normal)
		}
	}
	check("after Open")

	var during int
	err := sqlite.WriteFull(ctx, db, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&during)
	})
	if err != nil {
		t.Fatal(err)
	}
	if during != full {
		t.Errorf("synchronous during an inbox write = %d, want %d (FULL)", during, full)
	}
	check("after an inbox write")

	if err := db.InboxPut(ctx, storetest.Item(1)); err != nil {
		t.Fatal(err)
	}
	check("after InboxPut")
	if err := db.InboxDone(ctx, 1); err != nil {
		t.Fatal(err)
	}
	check("after InboxDone")
	if err := db.InboxPut(ctx, storetest.Item(3), storetest.Item(4)); err != nil {
		t.Fatal(err)
	}
	if err := db.InboxDone(ctx, 3, 4, 99); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("InboxDone(3, 4, 99) = %v, want ErrNotFound", err)
	}
	check("after a batch InboxDone naming an unknown id")

	// Restored even when the write fails, or its context ends midway.
	boom := errors.New("boom")
	if err := sqlite.WriteFull(ctx, db, func(*sql.Tx) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("WriteFull = %v, want boom", err)
	}
	check("after a failed inbox write")
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	err = sqlite.WriteFull(cctx, db, func(tx *sql.Tx) error {
		cancel()
		_, err := tx.ExecContext(cctx, `INSERT INTO inbox (update_id, chat_id, payload, received_at) VALUES (2, '', x'', 0)`)
		return err
	})
	if err == nil {
		t.Error("WriteFull with its context cancelled: got nil error, want one")
	}
	check("after a cancelled inbox write")
	if got, err := db.InboxQueued(ctx, 0, 0); err != nil || len(got) != 0 {
		t.Errorf("the cancelled write left %v, %v; want nothing", storetest.UpdateIDs(got), err)
	}
}
