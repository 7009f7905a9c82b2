package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/mcpgram/mcpgram/store/internal/chatsettings"
)

// chatSettings are what a DB does with one chat's settings (all of
// store.ChatSettings but ChatsWithServersOff), over chatSetting and
// setChatSetting. A DB embeds them under this unexported name, so that
// their methods are its methods and nothing else of them shows.
type chatSettings = chatsettings.Settings

// chatSetting reads one column of chatID's row of chat_settings (see
// chatsettings.ReadFunc).
func (db *DB) chatSetting(ctx context.Context, chatID, column string) (value string, found bool, err error) {
	err = db.row(ctx, chatsettings.ReadSQL(column), []any{chatID}, &value)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", false, nil
	}
	return value, err == nil, err
}

// setChatSetting replaces one column of chatID's settings (see
// chatsettings.WriteFunc).
func (db *DB) setChatSetting(ctx context.Context, chatID, column, value string) error {
	// Idempotent: setting a value again leaves it as it is.
	_, err := db.exec(ctx, idempotent, chatsettings.WriteSQL(column), text(chatID), text(value), millis(time.Now()))
	return err
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
