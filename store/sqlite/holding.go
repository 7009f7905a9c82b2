package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// Holding names the tables with a row that holds text in any of its
// columns (as bytes: text, blobs and numbers alike). No part of mcpgram
// reads the database this way: it is for tests and audits of what is
// kept, such as that no sign-in's code or state is.
func (db *DB) Holding(ctx context.Context, text string) ([]string, error) {
	tables, err := db.column(ctx, `SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	var out []string
	for _, t := range tables {
		cols, err := db.column(ctx, `SELECT name FROM pragma_table_info(?)`, t)
		if err != nil {
			return nil, fmt.Errorf("list the columns of %s: %w", t, err)
		}
		var where []string
		for _, c := range cols {
			where = append(where, fmt.Sprintf("instr(CAST(%s AS BLOB), CAST(?1 AS BLOB)) > 0", quote(c)))
		}
		var found bool
		q := fmt.Sprintf(`SELECT EXISTS (SELECT 1 FROM %s WHERE %s)`, quote(t), strings.Join(where, " OR "))
		if err := db.reader.QueryRowContext(ctx, q, text).Scan(&found); err != nil {
			return nil, fmt.Errorf("search %s: %w", t, err)
		}
		if found {
			out = append(out, t)
		}
	}
	return out, nil
}

// column returns the one column of the rows of query.
func (db *DB) column(ctx context.Context, query string, args ...any) ([]string, error) {
	rows, err := db.reader.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	var out []string
	for rows.Next() {
		var s sql.NullString
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s.String)
	}
	return out, rows.Err()
}

// quote quotes an identifier.
func quote(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }
