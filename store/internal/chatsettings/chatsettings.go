// Package chatsettings is what the two engines, store/sqlite and
// store/postgres, share of what each chat chooses for itself
// (store.ChatSettings): a row of chat_settings a chat, a column a setting,
// the two statements that read and write one column, which read the same
// on either, and the methods built on them. Each engine runs the
// statements its own way (SQLite on statements prepared at Open,
// PostgreSQL through its retries) and hands its two functions to New.
package chatsettings

import (
	"context"
	"fmt"

	"github.com/mcpgram/mcpgram/store/internal/tables"
)

// The columns of chat_settings, one a setting; each is "" (or "[]" for
// servers_off) until the chat chooses.
const (
	instructions = "instructions"
	serversOff   = "servers_off"
	model        = "model"
	topics       = "topics"
)

// topicsShared is the topics column's value of a group that keeps one
// conversation for all its topics; the empty string keeps one per topic.
const topicsShared = "shared"

// ReadSQL reads column of chat $1's row.
func ReadSQL(column string) string {
	return `SELECT ` + column + ` FROM chat_settings WHERE chat_id = $1`
}

// Reads are the statements of every setting's read, for an engine to
// prepare: a turn reads them all.
var Reads = []string{ReadSQL(instructions), ReadSQL(serversOff), ReadSQL(model), ReadSQL(topics)}

// WriteSQL sets column of chat $1's row to $2 at $3 (see tables.Millis),
// making the row if need be. Setting a value again leaves it as it is,
// so a write retried after a lost answer is harmless.
func WriteSQL(column string) string {
	return `INSERT INTO chat_settings (chat_id, ` + column + `, updated_at) VALUES ($1, $2, $3)
		ON CONFLICT (chat_id) DO UPDATE SET ` + column + ` = excluded.` + column + `, updated_at = excluded.updated_at`
}

// A ReadFunc runs ReadSQL(column) for chatID; found is false, with no
// error, when the chat has no row yet.
type ReadFunc func(ctx context.Context, chatID, column string) (value string, found bool, err error)

// A WriteFunc runs WriteSQL(column) for chatID and value.
type WriteFunc func(ctx context.Context, chatID, column, value string) error

// Settings are the methods of store.ChatSettings that read or write one
// chat's row, over an engine's ReadFunc and WriteFunc. An engine embeds
// them; ChatsWithServersOff, a query over all rows, is its own.
type Settings struct {
	read  ReadFunc
	write WriteFunc
}

// New returns the Settings that read with read and write with write.
func New(read ReadFunc, write WriteFunc) Settings {
	return Settings{read: read, write: write}
}

// get reads one column of chatID's row; found is false when the chat
// set nothing yet.
func (s Settings) get(ctx context.Context, chatID, column string) (value string, found bool, err error) {
	value, found, err = s.read(ctx, chatID, column)
	if err != nil {
		return "", false, fmt.Errorf("%s of chat %q: %w", column, chatID, err)
	}
	return value, found, nil
}

// set replaces one column of chatID's settings, creating its row if need
// be.
func (s Settings) set(ctx context.Context, chatID, column, value string) error {
	if err := s.write(ctx, chatID, column, value); err != nil {
		return fmt.Errorf("set %s of chat %q: %w", column, chatID, err)
	}
	return nil
}

// ChatInstructions returns the instructions chatID set with /system, or
// "" when it set none.
func (s Settings) ChatInstructions(ctx context.Context, chatID string) (string, error) {
	v, _, err := s.get(ctx, chatID, instructions)
	return v, err
}

// SetChatInstructions replaces chatID's instructions; "" clears them.
func (s Settings) SetChatInstructions(ctx context.Context, chatID, text string) error {
	return s.set(ctx, chatID, instructions, text)
}

// ChatServersOff returns the servers chatID turned off for itself, sorted.
func (s Settings) ChatServersOff(ctx context.Context, chatID string) ([]string, error) {
	raw, found, err := s.get(ctx, chatID, serversOff)
	if err != nil || !found {
		return nil, err
	}
	return tables.DecodeNames(raw)
}

// SetChatServersOff replaces the servers chatID turned off for itself.
func (s Settings) SetChatServersOff(ctx context.Context, chatID string, servers []string) error {
	return s.set(ctx, chatID, serversOff, tables.EncodeNames(servers))
}

// ChatProfile returns the model profile chatID chose with /model, or ""
// when it chose none (the default).
func (s Settings) ChatProfile(ctx context.Context, chatID string) (string, error) {
	v, _, err := s.get(ctx, chatID, model)
	return v, err
}

// SetChatProfile records chatID's model profile; "" returns it to the
// default.
func (s Settings) SetChatProfile(ctx context.Context, chatID, profile string) error {
	return s.set(ctx, chatID, model, profile)
}

// ChatTopicsShared reports whether chatID chose with /topics one
// conversation for all its topics.
func (s Settings) ChatTopicsShared(ctx context.Context, chatID string) (bool, error) {
	v, _, err := s.get(ctx, chatID, topics)
	return v == topicsShared, err
}

// SetChatTopicsShared records whether chatID keeps one conversation for
// all its topics.
func (s Settings) SetChatTopicsShared(ctx context.Context, chatID string, shared bool) error {
	v := ""
	if shared {
		v = topicsShared
	}
	return s.set(ctx, chatID, topics, v)
}
