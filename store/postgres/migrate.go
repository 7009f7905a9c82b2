package postgres

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/mcpgram/mcpgram/store/internal/tables"
)

// migrateLock is the key of the advisory lock that makes instances
// starting together migrate one at a time ("mcpgram" in ASCII).
const migrateLock int64 = 0x6d6370677261_6d

// migrate applies the migrations the database does not have yet, each in
// its own transaction (PostgreSQL's DDL is transactional, so a failed
// migration leaves nothing behind). Processes migrating the same database
// at once wait for each other on a session advisory lock, which ends with
// the connection if its process dies.
func (db *DB) migrate(ctx context.Context, fsys fs.FS) error {
	ms, err := tables.ReadMigrations(fsys)
	if err != nil {
		return fmt.Errorf("load migrations: %w", err)
	}
	if len(ms) == 0 {
		return errors.New("load migrations: none found")
	}
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, migrateLock); err != nil {
		return fmt.Errorf("wait for other migrations: %w", err)
	}
	defer func() {
		if _, err := conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, migrateLock); err != nil {
			// Still held: close the connection, which ends the session
			// and its lock, rather than hand it back to the pool.
			_ = conn.Conn().Close(context.WithoutCancel(ctx))
		}
	}()
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    integer PRIMARY KEY,
		name       text    NOT NULL,
		applied_at bigint  NOT NULL
	)`); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}

	rows, err := conn.Query(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	applied, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	// A database written by a newer binary has tables this one does not
	// know; refusing is safer than running against them.
	if newest, known := slices.Max(append(applied, 0)), ms[len(ms)-1].Version; newest > known {
		return fmt.Errorf("schema version %d is newer than this binary knows (%d)", newest, known)
	}
	for _, m := range ms {
		if slices.Contains(applied, m.Version) {
			continue
		}
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`,
				m.Version, m.Name, millis(time.Now()))
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
	var v *int64
	if err := db.pool.QueryRow(ctx, `SELECT max(version) FROM schema_migrations`).Scan(&v); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	if v == nil {
		return 0, nil
	}
	return int(*v), nil
}
