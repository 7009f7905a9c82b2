package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/mcpgram/mcpgram/store/internal/tables"
)

// chatSettingSQL reads one column of a chat's settings; a turn reads
// four of them (see readSQL).
func chatSettingSQL(column string) string {
	return `SELECT ` + column + ` FROM chat_settings WHERE chat_id = ?`
}

// chatSetting reads one column of chatID's row of chat_settings; found
// is false when the chat set nothing yet.
func (db *DB) chatSetting(ctx context.Context, chatID, column string) (value string, found bool, err error) {
	err = db.readRow(ctx, chatSettingSQL(column), chatID).Scan(&value)
	if errors.Is(err, sql.ErrNoRows) {
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
	q := `INSERT INTO chat_settings (chat_id, ` + column + `, updated_at) VALUES (?, ?, ?)
	ON CONFLICT (chat_id) DO UPDATE SET ` + column + ` = excluded.` + column + `, updated_at = excluded.updated_at`
	now := db.now()
	err := db.write(ctx, func(tx *sql.Tx) error {
		_, err := db.txExec(ctx, tx, q, chatID, value, millis(now))
		return err
	})
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
	rows, err := db.readRows(ctx, `SELECT chat_id FROM chat_settings WHERE servers_off <> '[]' ORDER BY chat_id`)
	if err != nil {
		return nil, fmt.Errorf("chats with servers off: %w", err)
	}
	defer func() { _ = rows.Close() }()
	var chats []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("chats with servers off: %w", err)
		}
		chats = append(chats, id)
	}
	if err := rows.Err(); err != nil {
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
