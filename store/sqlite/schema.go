package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"

	"github.com/mcpgram/mcpgram/store/internal/tables"
)

// A new database is made in one transaction from the schema its migrations
// give, rather than by applying them one by one: each ALTER of a migration
// re-reads the whole schema, and replaying them for every new file was half
// the CPU time of the tests, which make hundreds. The schema is found once
// per process, by applying the migrations to a database in memory and
// reading back what it holds, so it cannot drift from them.
var schemas struct {
	mu  sync.Mutex
	sql string // of the embedded migrations, once found
}

// schemaOf returns the schema ms give, found at the first call.
func schemaOf(ctx context.Context, ms []tables.Migration) (string, error) {
	schemas.mu.Lock()
	defer schemas.mu.Unlock()
	if schemas.sql != "" {
		return schemas.sql, nil
	}
	mem, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		return "", err
	}
	defer func() { _ = mem.Close() }()
	mem.SetMaxOpenConns(1) // each connection to :memory: is a database of its own
	for _, m := range ms {
		if _, err := mem.ExecContext(ctx, m.SQL); err != nil {
			return "", fmt.Errorf("apply migration %q in memory: %w", m.Name, err)
		}
	}
	statements, err := dump(ctx, mem)
	if err != nil {
		return "", err
	}
	schemas.sql = strings.Join(statements, ";\n") + ";"
	return schemas.sql, nil
}

// dump lists the tables, indexes and triggers of a database's schema, as
// SQLite keeps their SQL, in the order they were made.
func dump(ctx context.Context, db interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}) ([]string, error) {
	rows, err := db.QueryContext(ctx, `SELECT sql FROM sqlite_schema
		WHERE sql IS NOT NULL AND name <> 'schema_migrations' AND name NOT LIKE 'sqlite_%' ORDER BY rowid`)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// create makes a new database's tables from the schema ms give, and records
// every migration of ms as applied, in one transaction; a database that has
// a table already, or a migration applied (by another process just now), is
// left to the migrations.
func (db *DB) create(ctx context.Context, ms []tables.Migration) error {
	schema, err := schemaOf(ctx, ms)
	if err != nil {
		return err
	}
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
		db.madeFromSchema = true
		return nil
	})
}
