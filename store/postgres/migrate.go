package postgres

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// A migration is one numbered schema change.
type migration struct {
	version int
	name    string
	sql     string
}

// migrations returns the migrations in fsys's root in version order. Names
// are NNNN_description.sql; versions must be unique.
func migrations(fsys fs.FS) ([]migration, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".sql") {
			continue
		}
		num, _, ok := strings.Cut(strings.TrimSuffix(name, ".sql"), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %q: name must be NNNN_description.sql", name)
		}
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: name, sql: string(b)})
	}
	slices.SortFunc(ms, func(a, b migration) int { return a.version - b.version })
	for i := 1; i < len(ms); i++ {
		if ms[i].version == ms[i-1].version {
			return nil, fmt.Errorf("migrations %q and %q share version %d", ms[i-1].name, ms[i].name, ms[i].version)
		}
	}
	return ms, nil
}

// migrateLock is the key of the advisory lock that makes instances
// starting together migrate one at a time ("mcpgram" in ASCII).
const migrateLock int64 = 0x6d6370677261_6d

// migrate applies the migrations the database does not have yet, each in
// its own transaction (PostgreSQL's DDL is transactional, so a failed
// migration leaves nothing behind). Processes migrating the same database
// at once wait for each other on a session advisory lock, which ends with
// the connection if its process dies.
func (db *DB) migrate(ctx context.Context, fsys fs.FS) error {
	ms, err := migrations(fsys)
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
	if newest, known := slices.Max(append(applied, 0)), ms[len(ms)-1].version; newest > known {
		return fmt.Errorf("schema version %d is newer than this binary knows (%d)", newest, known)
	}
	for _, m := range ms {
		if slices.Contains(applied, m.version) {
			continue
		}
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`,
				m.version, m.name, millis(time.Now()))
			return err
		})
		if err != nil {
			return fmt.Errorf("apply migration %q: %w", m.name, err)
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
