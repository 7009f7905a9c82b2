package store

import (
	"context"
	"database/sql"
	"io/fs"
)

// OpenWithMigrations is Open with the migrations taken from fsys.
func OpenWithMigrations(ctx context.Context, path string, fsys fs.FS) (*DB, error) {
	return open(ctx, path, fsys)
}

// WriterSynchronous reports the writer connection's synchronous level
// (1 NORMAL, 2 FULL).
func WriterSynchronous(ctx context.Context, db *DB) (int, error) {
	var v int
	err := db.writer.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&v)
	return v, err
}

// WriteFull runs fn the way the inbox writes run.
func WriteFull(ctx context.Context, db *DB, fn func(*sql.Tx) error) error {
	return db.writeFull(ctx, fn)
}

// QueryInt runs a query returning one integer on a reader connection.
func QueryInt(ctx context.Context, db *DB, query string, args ...any) (int64, error) {
	var v int64
	err := db.reader.QueryRowContext(ctx, query, args...).Scan(&v)
	return v, err
}

// HoldWriter takes the writer connection until release is called, so tests
// can make writes queue.
func HoldWriter(ctx context.Context, db *DB) (release func(), err error) {
	conn, err := db.writer.Conn(ctx)
	if err != nil {
		return nil, err
	}
	return func() { _ = conn.Close() }, nil
}
