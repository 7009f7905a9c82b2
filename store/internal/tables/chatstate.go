package tables

import (
	"fmt"

	"github.com/mcpgram/mcpgram/store"
)

// ChatStateSQL is store.ChatState's one statement, with key and chat the
// engine's placeholders for the conversation's key and its chat. SQLite's
// plain ? takes its arguments in order: key, key, chat, key, key, key
// (see ChatStateArgs).
func ChatStateSQL(key, chat string) string {
	return `SELECT
	coalesce((SELECT instructions FROM chat_settings WHERE chat_id = ` + key + `), ''),
	coalesce((SELECT model FROM chat_settings WHERE chat_id = ` + key + `), ''),
	coalesce((SELECT servers_off FROM chat_settings WHERE chat_id = ` + chat + `), ''),
	coalesce((SELECT id FROM conversations WHERE chat_id = ` + key + ` AND ended_at IS NULL), 0),
	EXISTS (SELECT 1 FROM pending WHERE chat_id = ` + key + ` AND resolved_at IS NULL),
	EXISTS (SELECT 1 FROM forms WHERE chat_id = ` + key + ` AND resolved_at IS NULL)`
}

// ChatStateArgs are the arguments of ChatStateSQL written with plain ?
// placeholders.
func ChatStateArgs(key, chat string) []any { return []any{key, key, chat, key, key, key} }

// ScanChatState reads the row of ChatStateSQL through scan (a row's Scan).
func ScanChatState(scan func(dest ...any) error) (store.ChatState, error) {
	var s store.ChatState
	var off string
	if err := scan(&s.Instructions, &s.Profile, &off, &s.Conversation, &s.PendingOpen, &s.FormsOpen); err != nil {
		return store.ChatState{}, err
	}
	if off != "" { // "" when the chat has no settings row
		names, err := DecodeNames(off)
		if err != nil {
			return store.ChatState{}, fmt.Errorf("servers off: %w", err)
		}
		s.ServersOff = names
	}
	return s, nil
}
