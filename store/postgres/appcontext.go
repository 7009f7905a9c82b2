package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mcpgram/mcpgram/store"
)

// What an MCP App gave the model for its chat's next turn: one row a
// chat, put in place of the one before and taken (deleted) by the turn.

// PutAppContext keeps c for its chat's next turn, in place of what was
// kept; an empty Text deletes it. Run twice it leaves what it left run
// once.
func (db *DB) PutAppContext(ctx context.Context, c store.AppContext) error {
	if err := c.Check(); err != nil {
		return fmt.Errorf("put app context for chat %q: %w", c.ChatID, err)
	}
	created := c.CreatedAt
	if created.IsZero() {
		created = time.Now()
	}
	var err error
	if c.Text == "" {
		_, err = db.exec(ctx, idempotent, `DELETE FROM app_contexts WHERE chat_id = $1`, text(c.ChatID))
	} else {
		_, err = db.exec(ctx, idempotent, `INSERT INTO app_contexts (chat_id, user_id, title, text, created_at, expires_at)
			VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (chat_id) DO UPDATE SET user_id = excluded.user_id,
			title = excluded.title, text = excluded.text, created_at = excluded.created_at, expires_at = excluded.expires_at`,
			text(c.ChatID), text(c.UserID), text(c.Title), text(c.Text), millis(created), millis(c.ExpiresAt))
	}
	if err != nil {
		return fmt.Errorf("put app context for chat %q: %w", c.ChatID, err)
	}
	return nil
}

// TakeAppContext returns and deletes what is kept for the chat, or
// store.ErrNotFound when nothing is or it expired. A take whose answer
// was lost is not run again: the context is then lost with it, not
// given twice.
func (db *DB) TakeAppContext(ctx context.Context, chatID string, now time.Time) (store.AppContext, error) {
	c := store.AppContext{ChatID: chatID}
	var created, expires int64
	err := db.do(ctx, once, func(int) error {
		return db.pool.QueryRow(ctx, `DELETE FROM app_contexts WHERE chat_id = $1
			RETURNING user_id, title, text, created_at, expires_at`, text(chatID)).Scan(&c.UserID, &c.Title, &c.Text, &created, &expires)
	})
	if err == nil && expires <= millis(now) {
		err = pgx.ErrNoRows
	}
	if err != nil {
		return store.AppContext{}, fmt.Errorf("take app context: %w", notFound(err))
	}
	c.CreatedAt, c.ExpiresAt = fromMillis(created), fromMillis(expires)
	return c, nil
}
