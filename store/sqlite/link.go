package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpgram/mcpgram/store"
)

const (
	linkColumns   = `key, chat_id, user_id, server, uri, name, created_at, expires_at`
	insertLinkSQL = `INSERT INTO links (` + linkColumns + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO NOTHING`
	trimLinksSQL  = `DELETE FROM links WHERE chat_id = ? AND (expires_at <= ? OR id NOT IN
		(SELECT id FROM links WHERE chat_id = ? ORDER BY id DESC LIMIT ?))`
	getLinkSQL = `SELECT ` + linkColumns + ` FROM links WHERE key = ?`
)

// PutLink stores l, then deletes the chat's links expired or beyond the
// keep newest, in one transaction.
func (db *DB) PutLink(ctx context.Context, l store.Link, keep int) error {
	created := l.CreatedAt
	if created.IsZero() {
		created = db.now()
	}
	err := db.putKept(ctx, insertLinkSQL, []any{l.Key, l.ChatID, l.UserID, l.Server, l.URI, l.Name, millis(created), millis(l.ExpiresAt)},
		trimLinksSQL, l.ChatID, created, keep)
	if err != nil {
		return fmt.Errorf("put link for chat %q: %w", l.ChatID, err)
	}
	return nil
}

// GetLink returns the link with the given key, or store.ErrNotFound.
func (db *DB) GetLink(ctx context.Context, key string) (store.Link, error) {
	var l store.Link
	var created, expires int64
	err := db.readRow(ctx, getLinkSQL, key).Scan(&l.Key, &l.ChatID, &l.UserID, &l.Server, &l.URI, &l.Name, &created, &expires)
	if err != nil {
		return store.Link{}, fmt.Errorf("get link: %w", notFound(err))
	}
	l.CreatedAt, l.ExpiresAt = fromMillis(created), fromMillis(expires)
	return l, nil
}

// PruneLinks deletes the links expired at or before now.
func (db *DB) PruneLinks(ctx context.Context, now time.Time) (int64, error) {
	return db.pruneExpired(ctx, now, "links")
}
