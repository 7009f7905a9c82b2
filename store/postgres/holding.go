package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Holding names the tables with a row that holds text in any of its
// columns (bytea columns as bytes, the others as text). No part of
// mcpgram reads the database this way: it is for tests and audits of
// what is kept, such as that no sign-in's code or state is. Old versions
// of updated or deleted rows, which PostgreSQL keeps on disk until it
// vacuums the table, are not rows any more, and not searched.
func (db *DB) Holding(ctx context.Context, text string) ([]string, error) {
	rows, err := db.pool.Query(ctx, `SELECT table_name::text, column_name::text, data_type::text FROM information_schema.columns
		WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position`)
	if err != nil {
		return nil, fmt.Errorf("list columns: %w", err)
	}
	type column struct{ table, name, kind string }
	cols, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (column, error) {
		var c column
		err := r.Scan(&c.table, &c.name, &c.kind)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("list columns: %w", err)
	}
	where := map[string][]string{}
	var tables []string
	for _, c := range cols {
		if _, ok := where[c.table]; !ok {
			tables = append(tables, c.table)
		}
		id := pgx.Identifier{c.name}.Sanitize()
		if c.kind == "bytea" {
			where[c.table] = append(where[c.table], fmt.Sprintf("position(convert_to($1, 'UTF8') IN %s) > 0", id))
		} else {
			where[c.table] = append(where[c.table], fmt.Sprintf("strpos(%s::text, $1) > 0", id))
		}
	}
	var out []string
	for _, t := range tables {
		var found bool
		q := fmt.Sprintf(`SELECT EXISTS (SELECT 1 FROM %s WHERE %s)`, pgx.Identifier{t}.Sanitize(), strings.Join(where[t], " OR "))
		if err := db.pool.QueryRow(ctx, q, text).Scan(&found); err != nil {
			return nil, fmt.Errorf("search %s: %w", t, err)
		}
		if found {
			out = append(out, t)
		}
	}
	return out, nil
}
