package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mcpgram/mcpgram/store"
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

// ChatServersOff returns the servers chatID turned off for itself, sorted.
func (db *DB) ChatServersOff(ctx context.Context, chatID string) ([]string, error) {
	var raw string
	err := db.pool.QueryRow(ctx, `SELECT servers_off FROM chat_settings WHERE chat_id = $1`, chatID).Scan(&raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("servers off in chat %q: %w", chatID, err)
	}
	return store.DecodeNames(raw)
}

// SetChatServersOff replaces the servers chatID turned off for itself.
func (db *DB) SetChatServersOff(ctx context.Context, chatID string, servers []string) error {
	_, err := db.pool.Exec(ctx, `INSERT INTO chat_settings (chat_id, servers_off, updated_at) VALUES ($1, $2, $3)
		ON CONFLICT (chat_id) DO UPDATE SET servers_off = excluded.servers_off, updated_at = excluded.updated_at`,
		text(chatID), text(store.EncodeNames(servers)), millis(time.Now()))
	if err != nil {
		return fmt.Errorf("set servers off in chat %q: %w", chatID, err)
	}
	return nil
}

// ChatModel returns the model profile chatID chose with /model, or "" when
// it chose none (the default).
func (db *DB) ChatModel(ctx context.Context, chatID string) (string, error) {
	var s string
	err := db.pool.QueryRow(ctx, `SELECT model FROM chat_settings WHERE chat_id = $1`, chatID).Scan(&s)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("model of chat %q: %w", chatID, err)
	}
	return s, nil
}

// SetChatModel records chatID's model profile; "" returns it to the
// default.
func (db *DB) SetChatModel(ctx context.Context, chatID, profile string) error {
	_, err := db.pool.Exec(ctx, `INSERT INTO chat_settings (chat_id, model, updated_at) VALUES ($1, $2, $3)
		ON CONFLICT (chat_id) DO UPDATE SET model = excluded.model, updated_at = excluded.updated_at`,
		text(chatID), text(profile), millis(time.Now()))
	if err != nil {
		return fmt.Errorf("set model of chat %q: %w", chatID, err)
	}
	return nil
}
