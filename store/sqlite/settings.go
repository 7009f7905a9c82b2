package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/mcpgram/mcpgram/store/internal/chatsettings"
)

// chatSettings are what a DB does with one chat's settings (all of
// store.ChatSettings but ChatsWithServersOff), over chatSetting and
// setChatSetting. A DB embeds them under this unexported name, so that
// their methods are its methods and nothing else of them shows.
type chatSettings = chatsettings.Settings

// chatSetting reads one column of chatID's row of chat_settings (see
// chatsettings.ReadFunc), on the statement prepared at Open.
func (db *DB) chatSetting(ctx context.Context, chatID, column string) (value string, found bool, err error) {
	err = db.readRow(ctx, chatsettings.ReadSQL(column), chatID).Scan(&value)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	return value, err == nil, err
}

// setChatSetting replaces one column of chatID's settings (see
// chatsettings.WriteFunc).
func (db *DB) setChatSetting(ctx context.Context, chatID, column, value string) error {
	now := db.now()
	return db.write(ctx, func(tx *sql.Tx) error {
		_, err := db.txExec(ctx, tx, chatsettings.WriteSQL(column), chatID, value, millis(now))
		return err
	})
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
