package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/mcpgram/mcpgram/store"
)

const (
	appViewColumns   = `id, chat_id, user_id, server, tool, resource_uri, title, input, result, created_at, expires_at`
	insertAppViewSQL = `INSERT INTO app_views (` + appViewColumns + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`
	trimAppViewsSQL  = `DELETE FROM app_views WHERE chat_id = ? AND (expires_at <= ? OR seq NOT IN
		(SELECT seq FROM app_views WHERE chat_id = ? ORDER BY seq DESC LIMIT ?))`
	getAppViewSQL = `SELECT ` + appViewColumns + ` FROM app_views WHERE id = ?`

	putAppContextSQL = `INSERT INTO app_contexts (chat_id, user_id, title, text, created_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (chat_id) DO UPDATE SET user_id = excluded.user_id,
		title = excluded.title, text = excluded.text, created_at = excluded.created_at, expires_at = excluded.expires_at`
	takeAppContextSQL = `DELETE FROM app_contexts WHERE chat_id = ? RETURNING user_id, title, text, created_at, expires_at`
)

// PutAppView stores v, then deletes the chat's views expired or beyond
// the keep newest, in one transaction.
func (db *DB) PutAppView(ctx context.Context, v store.AppView, keep int) error {
	if err := v.Check(); err != nil {
		return fmt.Errorf("put app view for chat %q: %w", v.ChatID, err)
	}
	created := v.CreatedAt
	if created.IsZero() {
		created = db.now()
	}
	err := db.putKept(ctx, insertAppViewSQL, []any{v.ID, v.ChatID, v.UserID, v.Server, v.Tool, v.ResourceURI, v.Title,
		v.Input, v.Result, millis(created), millis(v.ExpiresAt)}, trimAppViewsSQL, v.ChatID, created, keep)
	if err != nil {
		return fmt.Errorf("put app view for chat %q: %w", v.ChatID, err)
	}
	return nil
}

// GetAppView returns the view with the given ID, or store.ErrNotFound.
func (db *DB) GetAppView(ctx context.Context, id string) (store.AppView, error) {
	var v store.AppView
	var created, expires int64
	err := db.readRow(ctx, getAppViewSQL, id).Scan(&v.ID, &v.ChatID, &v.UserID, &v.Server, &v.Tool, &v.ResourceURI, &v.Title,
		&v.Input, &v.Result, &created, &expires)
	if err != nil {
		return store.AppView{}, fmt.Errorf("get app view: %w", notFound(err))
	}
	v.CreatedAt, v.ExpiresAt = fromMillis(created), fromMillis(expires)
	return v, nil
}

// PruneAppViews deletes the views and app contexts expired at or before
// now.
func (db *DB) PruneAppViews(ctx context.Context, now time.Time) (int64, error) {
	return db.pruneExpired(ctx, now, "app_views", "app_contexts")
}

// PutAppContext keeps c for its chat's next turn, in place of what was
// kept; an empty Text deletes it.
func (db *DB) PutAppContext(ctx context.Context, c store.AppContext) error {
	if err := c.Check(); err != nil {
		return fmt.Errorf("put app context for chat %q: %w", c.ChatID, err)
	}
	created := c.CreatedAt
	if created.IsZero() {
		created = db.now()
	}
	err := db.write(ctx, func(tx *sql.Tx) error {
		if c.Text == "" {
			_, err := tx.ExecContext(ctx, `DELETE FROM app_contexts WHERE chat_id = ?`, c.ChatID)
			return err
		}
		_, err := tx.ExecContext(ctx, putAppContextSQL, c.ChatID, c.UserID, c.Title, c.Text, millis(created), millis(c.ExpiresAt))
		return err
	})
	if err != nil {
		return fmt.Errorf("put app context for chat %q: %w", c.ChatID, err)
	}
	return nil
}

// TakeAppContext returns and deletes what is kept for the chat, or
// store.ErrNotFound when nothing is or it expired.
func (db *DB) TakeAppContext(ctx context.Context, chatID string, now time.Time) (store.AppContext, error) {
	c := store.AppContext{ChatID: chatID}
	var created, expires int64
	err := db.write(ctx, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, takeAppContextSQL, chatID).Scan(&c.UserID, &c.Title, &c.Text, &created, &expires)
	})
	if err == nil && expires <= millis(now) {
		err = sql.ErrNoRows
	}
	if err != nil {
		return store.AppContext{}, fmt.Errorf("take app context: %w", notFound(err))
	}
	c.CreatedAt, c.ExpiresAt = fromMillis(created), fromMillis(expires)
	return c, nil
}
