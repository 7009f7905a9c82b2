package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpgram/mcpgram/store"
)

// MediaPut stores an image and returns its reference (store.MediaHash).
// Storing the same bytes again restarts their retention without sending
// them again. The bytes live in the database, where every instance
// sharing it reads them.
func (db *DB) MediaPut(ctx context.Context, mimeType string, data []byte) (string, error) {
	hash := store.MediaHash(data)
	now := millis(time.Now())
	// Idempotent: the same bytes under the same name.
	tag, err := db.exec(ctx, idempotent, `UPDATE media SET stored_at = $2, mime_type = $3 WHERE hash = $1`, hash, now, text(mimeType))
	if err == nil && tag.RowsAffected() == 0 {
		if data == nil {
			data = []byte{} // NOT NULL; a nil slice binds as NULL
		}
		_, err = db.exec(ctx, idempotent, `INSERT INTO media (hash, mime_type, size, data, stored_at) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (hash) DO UPDATE SET stored_at = EXCLUDED.stored_at, mime_type = EXCLUDED.mime_type`,
			hash, text(mimeType), len(data), data, now)
	}
	if err != nil {
		return "", fmt.Errorf("store media %s: %w", hash, err)
	}
	return hash, nil
}

// MediaGet returns the image ref names, or an error wrapping
// store.ErrNotFound when it is not kept (never stored, deleted by
// MediaPrune, or not a reference at all).
func (db *DB) MediaGet(ctx context.Context, ref string) (store.Media, error) {
	if !store.ValidMediaHash(ref) {
		return store.Media{}, fmt.Errorf("media %q: %w", ref, store.ErrNotFound)
	}
	m := store.Media{Hash: ref}
	var at int64
	err := db.row(ctx, `SELECT mime_type, data, stored_at FROM media WHERE hash = $1`, []any{ref}, &m.MIMEType, &m.Data, &at)
	if err != nil {
		return store.Media{}, fmt.Errorf("media %s: %w", ref, notFound(err))
	}
	m.StoredAt = fromMillis(at)
	return m, nil
}

// MediaPrune deletes the images last stored before the given time and
// returns how many.
func (db *DB) MediaPrune(ctx context.Context, before time.Time) (int64, error) {
	tag, err := db.exec(ctx, idempotent, `DELETE FROM media WHERE stored_at < $1`, millis(before))
	if err != nil {
		return 0, fmt.Errorf("prune media: %w", err)
	}
	return tag.RowsAffected(), nil
}
