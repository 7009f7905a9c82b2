package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/mcpgram/mcpgram/store"
)

// What an MCP App gave the model for its chat's next turn: one row a
// chat, put in place of the one before and taken (deleted) by the turn.

const (
	putAppContextSQL = `INSERT INTO app_contexts (chat_id, user_id, title, text, created_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (chat_id) DO UPDATE SET user_id = excluded.user_id,
		title = excluded.title, text = excluded.text, created_at = excluded.created_at, expires_at = excluded.expires_at`
	takeAppContextSQL = `DELETE FROM app_contexts WHERE chat_id = ? RETURNING user_id, title, text, created_at, expires_at`
)

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
