package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
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

const setServersOffSQL = `INSERT INTO chat_settings (chat_id, servers_off, updated_at) VALUES (?, ?, ?)
	ON CONFLICT (chat_id) DO UPDATE SET servers_off = excluded.servers_off, updated_at = excluded.updated_at`

// ChatServersOff returns the servers chatID turned off for itself, sorted.
func (db *DB) ChatServersOff(ctx context.Context, chatID string) ([]string, error) {
	var raw string
	err := db.readRow(ctx, `SELECT servers_off FROM chat_settings WHERE chat_id = ?`, chatID).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("servers off in chat %q: %w", chatID, err)
	}
	return DecodeNames(raw)
}

// SetChatServersOff replaces the servers chatID turned off for itself.
func (db *DB) SetChatServersOff(ctx context.Context, chatID string, servers []string) error {
	now := db.now()
	err := db.write(ctx, func(tx *sql.Tx) error {
		_, err := db.txExec(ctx, tx, setServersOffSQL, chatID, EncodeNames(servers), millis(now))
		return err
	})
	if err != nil {
		return fmt.Errorf("set servers off in chat %q: %w", chatID, err)
	}
	return nil
}

// EncodeNames stores a set of names as a sorted JSON array; both engines
// keep chats' server sets this way.
func EncodeNames(names []string) string {
	set := slices.Compact(slices.Sorted(slices.Values(names)))
	if set == nil {
		set = []string{}
	}
	b, _ := json.Marshal(set) // strings always marshal
	return string(b)
}

// DecodeNames reads what EncodeNames wrote.
func DecodeNames(raw string) ([]string, error) {
	var names []string
	if err := json.Unmarshal([]byte(raw), &names); err != nil {
		return nil, fmt.Errorf("decode server names: %w", err)
	}
	return names, nil
}

const setModelSQL = `INSERT INTO chat_settings (chat_id, model, updated_at) VALUES (?, ?, ?)
	ON CONFLICT (chat_id) DO UPDATE SET model = excluded.model, updated_at = excluded.updated_at`

// ChatModel returns the model profile chatID chose with /model, or "" when
// it chose none (the default).
func (db *DB) ChatModel(ctx context.Context, chatID string) (string, error) {
	var s string
	err := db.readRow(ctx, `SELECT model FROM chat_settings WHERE chat_id = ?`, chatID).Scan(&s)
	if errors.Is(err, sql.ErrNoRows) {
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
	now := db.now()
	err := db.write(ctx, func(tx *sql.Tx) error {
		_, err := db.txExec(ctx, tx, setModelSQL, chatID, profile, millis(now))
		return err
	})
	if err != nil {
		return fmt.Errorf("set model of chat %q: %w", chatID, err)
	}
	return nil
}
