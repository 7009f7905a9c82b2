package sqlite

import (
	"context"
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
