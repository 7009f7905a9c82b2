package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

const setInstructionsSQL = `INSERT INTO chat_settings (chat_id, instructions, updated_at) VALUES (?, ?, ?)
	ON CONFLICT (chat_id) DO UPDATE SET instructions = excluded.instructions, updated_at = excluded.updated_at`

// ChatInstructions returns the instructions chatID set with /system, or
// "" when it set none.
func (db *DB) ChatInstructions(ctx context.Context, chatID string) (string, error) {
	var s string
	err := db.readRow(ctx, `SELECT instructions FROM chat_settings WHERE chat_id = ?`, chatID).Scan(&s)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("instructions of chat %q: %w", chatID, err)
	}
	return s, nil
}

// SetChatInstructions replaces chatID's instructions; "" clears them.
func (db *DB) SetChatInstructions(ctx context.Context, chatID, instructions string) error {
	now := db.now()
	err := db.write(ctx, func(tx *sql.Tx) error {
		_, err := db.txExec(ctx, tx, setInstructionsSQL, chatID, instructions, millis(now))
		return err
	})
	if err != nil {
		return fmt.Errorf("set instructions of chat %q: %w", chatID, err)
	}
	return nil
}
