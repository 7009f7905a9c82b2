package postgres

import (
	"context"
	"io/fs"
	"time"

	"github.com/mcpgram/mcpgram/store/internal/tables"
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

// Migrations counts the embedded migrations.
func Migrations(t interface{ Fatal(...any) }) int64 {
	sub, err := fs.Sub(migrationFS, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	ms, err := tables.ReadMigrations(sub)
	if err != nil {
		t.Fatal(err)
	}
	return int64(len(ms))
}

// Exec runs statements, several separated by semicolons.
func Exec(ctx context.Context, db *DB, sql string) error {
	_, err := db.pool.Exec(ctx, sql)
	return err
}

// SetRetryFor sets how long db's calls retry a lost connection.
func SetRetryFor(db *DB, d time.Duration) { db.retryFor = d }
