package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/mcpgram/mcpgram/store/internal/tables"
)

// chatSetting reads one column of chatID's row of chat_settings; found
// is false when the chat set nothing yet.
func (db *DB) chatSetting(ctx context.Context, chatID, column string) (value string, found bool, err error) {
	err = db.row(ctx, `SELECT `+column+` FROM chat_settings WHERE chat_id = $1`, []any{chatID}, &value)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("%s of chat %q: %w", column, chatID, err)
	}
	return value, true, nil
}

// setChatSetting replaces one column of chatID's settings, creating its
// row if need be.
func (db *DB) setChatSetting(ctx context.Context, chatID, column, value string) error {
	// Idempotent: setting a value again leaves it as it is.
	_, err := db.exec(ctx, idempotent, `INSERT INTO chat_settings (chat_id, `+column+`, updated_at) VALUES ($1, $2, $3)
		ON CONFLICT (chat_id) DO UPDATE SET `+column+` = excluded.`+column+`, updated_at = excluded.updated_at`,
		text(chatID), text(value), millis(time.Now()))
	if err != nil {
		return fmt.Errorf("set %s of chat %q: %w", column, chatID, err)
	}
	return nil
}

// ChatInstructions returns the instructions chatID set with /system, or
// "" when it set none.
func (db *DB) ChatInstructions(ctx context.Context, chatID string) (string, error) {
	s, _, err := db.chatSetting(ctx, chatID, "instructions")
	return s, err
}

// SetChatInstructions replaces chatID's instructions; "" clears them.
func (db *DB) SetChatInstructions(ctx context.Context, chatID, instructions string) error {
	return db.setChatSetting(ctx, chatID, "instructions", instructions)
}

// ChatServersOff returns the servers chatID turned off for itself, sorted.
func (db *DB) ChatServersOff(ctx context.Context, chatID string) ([]string, error) {
	raw, found, err := db.chatSetting(ctx, chatID, "servers_off")
	if err != nil || !found {
		return nil, err
	}
	return tables.DecodeNames(raw)
}

// SetChatServersOff replaces the servers chatID turned off for itself.
func (db *DB) SetChatServersOff(ctx context.Context, chatID string, servers []string) error {
	return db.setChatSetting(ctx, chatID, "servers_off", tables.EncodeNames(servers))
}

// ChatsWithServersOff returns the chats that have turned some server off
// for themselves, sorted.
func (db *DB) ChatsWithServersOff(ctx context.Context) ([]string, error) {
	var chats []string
	err := db.do(ctx, reads, func(int) error {
		rows, err := db.pool.Query(ctx, `SELECT chat_id FROM chat_settings WHERE servers_off <> '[]' ORDER BY chat_id`)
		if err == nil {
			chats, err = pgx.CollectRows(rows, pgx.RowTo[string])
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("chats with servers off: %w", err)
	}
	return chats, nil
}

// ChatProfile returns the model profile chatID chose with /model, or "" when
// it chose none (the default).
func (db *DB) ChatProfile(ctx context.Context, chatID string) (string, error) {
	s, _, err := db.chatSetting(ctx, chatID, "model")
	return s, err
}

// SetChatProfile records chatID's model profile; "" returns it to the
// default.
func (db *DB) SetChatProfile(ctx context.Context, chatID, profile string) error {
	return db.setChatSetting(ctx, chatID, "model", profile)
}

// topicsShared is the topics column's value of a group that keeps one
// conversation for all its topics; the empty string keeps one per topic.
const topicsShared = "shared"

// ChatTopicsShared reports whether chatID chose with /topics one
// conversation for all its topics.
func (db *DB) ChatTopicsShared(ctx context.Context, chatID string) (bool, error) {
	s, _, err := db.chatSetting(ctx, chatID, "topics")
	return s == topicsShared, err
}

// SetChatTopicsShared records whether chatID keeps one conversation for
// all its topics.
func (db *DB) SetChatTopicsShared(ctx context.Context, chatID string, shared bool) error {
	v := ""
	if shared {
		v = topicsShared
	}
	return db.setChatSetting(ctx, chatID, "topics", v)
}
