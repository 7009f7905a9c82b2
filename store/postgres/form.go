package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mcpgram/mcpgram/store"
)

const formColumns = `id, chat_id, user_id, payload, version, created_at, expires_at, resolved_at, resolution`

// CreateForm stores f, open, and returns its id.
func (db *DB) CreateForm(ctx context.Context, f store.Form) (int64, error) {
	now := time.Now()
	created := f.CreatedAt
	if created.IsZero() {
		created = now
	}
	var id int64
	err := db.tx(ctx, once, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO chats (id, created_at) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING`,
			f.ChatID, millis(now)); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `INSERT INTO forms (chat_id, user_id, payload, created_at, expires_at)
			VALUES ($1, $2, $3, $4, $5) RETURNING id`,
			f.ChatID, f.UserID, text(f.Payload), millis(created), millis(f.ExpiresAt)).Scan(&id)
	})
	if err != nil {
		return 0, fmt.Errorf("create form for chat %q: %w", f.ChatID, err)
	}
	return id, nil
}

func scanForm(row pgx.CollectableRow) (store.Form, error) {
	var f store.Form
	var resolved *int64
	var resolution *string
	var created, expires int64
	if err := row.Scan(&f.ID, &f.ChatID, &f.UserID, &f.Payload, &f.Version, &created, &expires, &resolved, &resolution); err != nil {
		return store.Form{}, err
	}
	f.CreatedAt, f.ExpiresAt, f.ResolvedAt = fromMillis(created), fromMillis(expires), fromNullMillis(resolved)
	if resolution != nil {
		f.Resolution = *resolution
	}
	return f, nil
}

// GetForm returns the form with the given id, open or not, or
// store.ErrNotFound.
func (db *DB) GetForm(ctx context.Context, id int64) (store.Form, error) {
	var f store.Form
	err := db.do(ctx, reads, func(int) error {
		rows, err := db.pool.Query(ctx, `SELECT `+formColumns+` FROM forms WHERE id = $1`, id)
		if err == nil {
			f, err = pgx.CollectExactlyOneRow(rows, scanForm)
		}
		return err
	})
	if err != nil {
		return store.Form{}, fmt.Errorf("get form %d: %w", id, notFound(err))
	}
	return f, nil
}

// SaveForm replaces the payload of the open form id at version, resolving
// it too with a resolution. Of two saves of one version, from any
// processes, the second UPDATE waits for the first's row and finds the
// version moved on.
func (db *DB) SaveForm(ctx context.Context, id, version int64, payload, resolution string) error {
	var saved int
	var exists, resolved bool
	// Once: run again after it went in, it would find its own version
	// moved on, and take its own save for someone else's.
	err := db.do(ctx, once, func(int) error {
		return db.pool.QueryRow(ctx, `WITH done AS (
				UPDATE forms SET payload = $1, version = version + 1,
					resolved_at = CASE WHEN $2 = '' THEN NULL ELSE $3::bigint END, resolution = NULLIF($2, '')
				WHERE id = $4 AND version = $5 AND resolved_at IS NULL RETURNING 1)
			SELECT (SELECT count(*) FROM done),
				EXISTS (SELECT 1 FROM forms WHERE id = $4),
				EXISTS (SELECT 1 FROM forms WHERE id = $4 AND resolved_at IS NOT NULL)`,
			text(payload), text(resolution), millis(time.Now()), id, version).Scan(&saved, &exists, &resolved)
	})
	switch {
	case err != nil:
	case saved == 1:
		return nil
	case !exists:
		err = store.ErrNotFound
	case resolved:
		err = store.ErrResolved
	default:
		err = store.ErrChanged
	}
	return fmt.Errorf("save form %d: %w", id, err)
}

// OpenForms returns the chat's open forms, oldest first.
func (db *DB) OpenForms(ctx context.Context, chatID string) ([]store.Form, error) {
	fs, err := collect(ctx, db, `SELECT `+formColumns+` FROM forms
		WHERE chat_id = $1 AND resolved_at IS NULL ORDER BY id`, []any{chatID}, scanForm)
	if err != nil {
		return nil, fmt.Errorf("open forms of chat %q: %w", chatID, err)
	}
	return fs, nil
}
