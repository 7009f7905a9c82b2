package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpgram/mcpgram/store"
)

const linkColumns = `key, chat_id, user_id, server, uri, name, created_at, expires_at`

// PutLink stores l, then deletes the chat's links expired or beyond the
// keep newest, in one transaction. Run twice it leaves what it left run
// once (a key stored again changes nothing).
func (db *DB) PutLink(ctx context.Context, l store.Link, keep int) error {
	created := l.CreatedAt
	if created.IsZero() {
		created = time.Now()
	}
	err := db.putKept(ctx, `INSERT INTO links (`+linkColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (key) DO NOTHING`,
		[]any{text(l.Key), text(l.ChatID), text(l.UserID), text(l.Server), text(l.URI), text(l.Name), millis(created), millis(l.ExpiresAt)},
		"links", "id", l.ChatID, created, keep)
	if err != nil {
		return fmt.Errorf("put link for chat %q: %w", l.ChatID, err)
	}
	return nil
}

// GetLink returns the link with the given key, or store.ErrNotFound.
func (db *DB) GetLink(ctx context.Context, key string) (store.Link, error) {
	var l store.Link
	var created, expires int64
	err := db.row(ctx, `SELECT `+linkColumns+` FROM links WHERE key = $1`, []any{text(key)},
		&l.Key, &l.ChatID, &l.UserID, &l.Server, &l.URI, &l.Name, &created, &expires)
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
