package store

import "context"

// WriterSynchronous reports the writer connection's synchronous level
// (1 NORMAL, 2 FULL), so tests can check that InboxPut restores it.
func WriterSynchronous(ctx context.Context, db *DB) (int, error) {
	var v int
	err := db.writer.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&v)
	return v, err
}
