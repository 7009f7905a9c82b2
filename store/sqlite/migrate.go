package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/mcpgram/mcpgram/store/internal/tables"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// schemaSQL is the schema the migrations give, generated from them (see
// TestSchemaIsTheMigrations): a new database is made from it in one
// transaction instead of by replaying every migration, each of which
// re-reads the whole schema.
//
//go:generate go test -count=1 -run ^TestSchemaIsTheMigrations$ . -update
//go:embed schema.sql
var schemaSQL string

// migrate applies the migrations the database does not have yet, each in its
// own transaction. Another process migrating the same file at the same time
// is safe: the transactions are IMMEDIATE and each re-checks its version.
//
// A new database (no migration applied, no table) is instead made from
// schema, when schema is that of the newest migration.
func (db *DB) migrate(ctx context.Context, fsys fs.FS, schema string) error {
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
	if !newest.Valid && schemaVersion(schema) == ms[len(ms)-1].Version {
		if err := db.create(ctx, ms, schema); err != nil {
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

// create makes a new database's tables from schema, and records every
// migration in ms as applied, in one transaction; a database that has a
// table already, or a migration applied (by another process just now), is
// left to the migrations.
func (db *DB) create(ctx context.Context, ms []tables.Migration, schema string) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM schema_migrations) +
			(SELECT count(*) FROM sqlite_schema WHERE name <> 'schema_migrations' AND name NOT LIKE 'sqlite_%')`).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return nil
		}
		if _, err := tx.ExecContext(ctx, schema); err != nil {
			return err
		}
		now := millis(db.now())
		for _, m := range ms {
			if _, err := tx.ExecContext(ctx,
				`INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
				m.Version, m.Name, now); err != nil {
				return err
			}
		}
		return nil
	})
}

// schemaVersion reads the version a generated schema is of, from its line
// "-- version N"; 0 when it names none.
func schemaVersion(schema string) int {
	for line := range strings.Lines(schema) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "-- version "); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				return 0
			}
			return n
		}
	}
	return 0
}
