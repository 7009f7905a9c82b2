package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpgram/mcpgram/store"
)

const appViewColumns = `id, chat_id, user_id, server, tool, resource_uri, title, input, result, created_at, expires_at`

// PutAppView stores v, then deletes the chat's views expired or beyond
// the keep newest, in one transaction. Run twice it leaves what it left
// run once (an ID stored again changes nothing).
func (db *DB) PutAppView(ctx context.Context, v store.AppView, keep int) error {
	if err := v.Check(); err != nil {
		return fmt.Errorf("put app view for chat %q: %w", v.ChatID, err)
	}
	created := v.CreatedAt
	if created.IsZero() {
		created = time.Now()
	}
	err := db.putKept(ctx, `INSERT INTO app_views (`+appViewColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT (id) DO NOTHING`,
		[]any{text(v.ID), text(v.ChatID), text(v.UserID), text(v.Server), text(v.Tool), text(v.ResourceURI), text(v.Title),
			v.Input, v.Result, millis(created), millis(v.ExpiresAt)},
		"app_views", "seq", v.ChatID, created, keep)
	if err != nil {
		return fmt.Errorf("put app view for chat %q: %w", v.ChatID, err)
	}
	return nil
}

// GetAppView returns the view with the given ID, or store.ErrNotFound.
func (db *DB) GetAppView(ctx context.Context, id string) (store.AppView, error) {
	var v store.AppView
	var created, expires int64
	err := db.row(ctx, `SELECT `+appViewColumns+` FROM app_views WHERE id = $1`, []any{text(id)},
		&v.ID, &v.ChatID, &v.UserID, &v.Server, &v.Tool, &v.ResourceURI, &v.Title, &v.Input, &v.Result, &created, &expires)
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
