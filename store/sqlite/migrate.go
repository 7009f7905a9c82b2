package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"

	"github.com/mcpgram/mcpgram/store/internal/tables"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// migrate applies the migrations the database does not have yet, each in its
// own transaction. Another process migrating the same file at the same time
// is safe: the transactions are IMMEDIATE and each re-checks its version.
//
// A new database (no migration applied, no table) is instead made at once
// from the schema the migrations give (see schema.go), when fromSchema.
func (db *DB) migrate(ctx context.Context, fsys fs.FS, fromSchema bool) error {
	ms, err := tables.ReadMigrations(fsys)
	if err != nil {
		return fmt.Errorf("load migrations: %w", err)
	}
	if len(ms) == 0 {
		return errors.New("load migrations: none found")
	}
	if _, err := db.writer.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER PRIMARY KEY,
		name       TEXT    NOT NULL,
		applied_at INTEGER NOT NULL
	) STRICT`); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}

	// A database written by a newer binary has tables this one does not
	// know; refusing is safer than running against them.
	var newest sql.NullInt64
	if err := db.writer.QueryRowContext(ctx, `SELECT max(version) FROM schema_migrations`).Scan(&newest); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if known := ms[len(ms)-1].Version; newest.Valid && newest.Int64 > int64(known) {
		return fmt.Errorf("schema version %d is newer than this binary knows (%d)", newest.Int64, known)
	}
	if !newest.Valid && fromSchema {
		if err := db.create(ctx, ms); err != nil {
			return fmt.Errorf("create schema: %w", err)
		}
	}

	for _, m := range ms {
		err := db.write(ctx, func(tx *sql.Tx) error {
			var one int
			err := tx.QueryRowContext(ctx, `SELECT 1 FROM schema_migrations WHERE version = ?`, m.Version).Scan(&one)
			if err == nil {
				return nil // already applied
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return err
			}
			if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
				return err
			}
			_, err = tx.ExecContext(ctx,
				`INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
				m.Version, m.Name, millis(db.now()))
			return err
		})
		if err != nil {
			return fmt.Errorf("apply migration %q: %w", m.Name, err)
		}
	}
	return nil
}

// SchemaVersion returns the highest migration version applied to the
// database.
func (db *DB) SchemaVersion(ctx context.Context) (int, error) {
	var v sql.NullInt64
	if err := db.reader.QueryRowContext(ctx, `SELECT max(version) FROM schema_migrations`).Scan(&v); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	return int(v.Int64), nil
}
