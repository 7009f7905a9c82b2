package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// ChatInstructions returns the instructions chatID set with /system, or
// "" when it set none.
func (db *DB) ChatInstructions(ctx context.Context, chatID string) (string, error) {
	var s string
	err := db.pool.QueryRow(ctx, `SELECT instructions FROM chat_settings WHERE chat_id = $1`, chatID).Scan(&s)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("instructions of chat %q: %w", chatID, err)
	}
	return s, nil
}

// SetChatInstructions replaces chatID's instructions; "" clears them.
func (db *DB) SetChatInstructions(ctx context.Context, chatID, instructions string) error {
	_, err := db.pool.Exec(ctx, `INSERT INTO chat_settings (chat_id, instructions, updated_at) VALUES ($1, $2, $3)
		ON CONFLICT (chat_id) DO UPDATE SET instructions = excluded.instructions, updated_at = excluded.updated_at`,
		text(chatID), text(instructions), millis(time.Now()))
	if err != nil {
		return fmt.Errorf("set instructions of chat %q: %w", chatID, err)
	}
	return nil
}
