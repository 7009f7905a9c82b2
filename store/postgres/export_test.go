package postgres

import (
	"context"
	"io/fs"
)

// OpenWithMigrations is Open with the migrations taken from fsys.
func OpenWithMigrations(ctx context.Context, dsn string, fsys fs.FS) (*DB, error) {
	return open(ctx, dsn, fsys)
}

// QueryInt runs a query returning one integer.
func QueryInt(ctx context.Context, db *DB, query string, args ...any) (int64, error) {
	var v int64
	err := db.pool.QueryRow(ctx, query, args...).Scan(&v)
	return v, err
}
