package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/store/internal/tables"
)

// CurrentConversation returns the id of the chat's active conversation, or
// store.ErrNotFound when it has none. It never writes: a turn can read a
// new chat's (empty) history without taking the writer, and start the
// conversation with its first [DB.AppendTurn].
func (db *DB) CurrentConversation(ctx context.Context, chatID string) (int64, error) {
	var id int64
	err := db.readRow(ctx, activeConversationSQL, chatID).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("current conversation of chat %q: %w", chatID, notFound(err))
	}
	return id, nil
}

// ResetConversation ends the chat's active conversation, if any, and starts
// a new one whose id it returns. The old conversation stays on disk.
func (db *DB) ResetConversation(ctx context.Context, chatID string) (int64, error) {
	var id int64
	err := db.write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx,
			`UPDATE conversations SET ended_at = ? WHERE chat_id = ? AND ended_at IS NULL`,
			millis(db.now()), chatID); err != nil {
			return err
		}
		var err error
		id, err = db.startConversation(ctx, tx, chatID)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("reset conversation of chat %q: %w", chatID, err)
	}
	return id, nil
}

const (
	activeConversationSQL = `SELECT id FROM conversations WHERE chat_id = ? AND ended_at IS NULL`
	insertConversationSQL = `INSERT INTO conversations (chat_id, created_at) VALUES (?, ?)`
	// insertMessageSQL counts the message's bytes (the 11th argument)
	// onto the history's (see RecentMessages), after the conversation's
	// newest message that is not replaced (the 12th names it): one lookup
	// at the end of messages_history. Plain ? placeholders: modernc's
	// driver reads the name of each numbered one on every call.
	insertMessageSQL = `INSERT INTO messages
		(conversation_id, role, content, prompt_tokens, completion_tokens, media, only_for, shared, turn_id, created_at, history_bytes)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ? + coalesce((SELECT max(history_bytes)
			FROM messages WHERE conversation_id = ? AND replaced_at IS NULL), 0))`
	messagesSQL = `SELECT id, conversation_id, role, content,
		prompt_tokens, completion_tokens, media, only_for, shared, turn_id, created_at
		FROM messages WHERE conversation_id = ? AND replaced_at IS NULL ORDER BY history_bytes, id`
	// messagesSinceSQL reads from a message on in messages_history,
	// which holds no replaced message to pass over (a retry leaves some
	// after the message read from), in its order (history_bytes grows
	// with id). Named: the planner would take the table's ids for the
	// range, and walk the other conversations' messages.
	messagesSinceSQL = `SELECT id, conversation_id, role, content,
		prompt_tokens, completion_tokens, media, only_for, shared, turn_id, created_at
		FROM messages INDEXED BY messages_history WHERE conversation_id = ? AND replaced_at IS NULL
			AND history_bytes >= (SELECT history_bytes FROM messages
				WHERE id = ? AND conversation_id = ? AND replaced_at IS NULL) AND id >= ?
		ORDER BY history_bytes, id LIMIT ?`
	// recentMessagesSQL reads the messages whose bytes end within the
	// last (third argument) of the history: a range of messages_history, in its order
	// (history_bytes grows with id), so nothing is sorted.
	recentMessagesSQL = `SELECT id, conversation_id, role, content,
		prompt_tokens, completion_tokens, media, only_for, shared, turn_id, created_at
		FROM messages WHERE conversation_id = ? AND replaced_at IS NULL
			AND history_bytes > (SELECT coalesce(max(history_bytes), 0) FROM messages
				WHERE conversation_id = ? AND replaced_at IS NULL) - ?
		ORDER BY history_bytes, id`
	// replaceMessagesSQL replaces from a message on: a range of
	// messages_history from that message's place (the conversation's
	// whole range when it is not one of its messages).
	replaceMessagesSQL = `UPDATE messages INDEXED BY messages_history SET replaced_at = ?
		WHERE conversation_id = ? AND replaced_at IS NULL AND id >= ?
			AND history_bytes >= coalesce((SELECT history_bytes FROM messages
				WHERE id = ? AND conversation_id = ? AND replaced_at IS NULL), 0)`
)

func (db *DB) startConversation(ctx context.Context, tx *sql.Tx, chatID string) (int64, error) {
	now := db.now()
	if err := db.ensureChat(ctx, tx, chatID, now); err != nil {
		return 0, err
	}
	res, err := db.txExec(ctx, tx, insertConversationSQL, chatID, millis(now))
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

func (db *DB) insertMessages(ctx context.Context, tx *sql.Tx, conversationID int64, now time.Time, msgs []store.Message) error {
	if len(msgs) == 0 {
		return nil
	}
	stmt, err := db.txStmt(ctx, tx, insertMessageSQL)
	if err != nil {
		return err
	}
	defer func() { _ = stmt.Close() }()
	for _, m := range msgs {
		at := m.CreatedAt
		if at.IsZero() {
			at = now
		}
		if _, err := stmt.ExecContext(ctx, conversationID, m.Role, m.Content,
			m.PromptTokens, m.CompletionTokens, tables.JoinMedia(m.Media), m.OnlyFor, m.Shared, m.TurnID, millis(at), len(m.Content), conversationID); err != nil {
			return err
		}
	}
	return nil
}

// chatStateSQL is ChatState's statement.
var chatStateSQL = tables.ChatStateSQL("?", "?")

// ChatState reads what a turn needs of its chat before it starts, in one
// statement (see store.ChatState), on the writer when it is free: the
// chat's last turn wrote those pages (see readWarm).
func (db *DB) ChatState(ctx context.Context, key, chat string) (store.ChatState, error) {
	var st store.ChatState
	err := db.readWarm(ctx, chatStateSQL, func(row *sql.Row) (err error) {
		st, err = tables.ScanChatState(row.Scan)
		return err
	}, tables.ChatStateArgs(key, chat)...)
	if err != nil {
		return store.ChatState{}, fmt.Errorf("state of chat %q: %w", key, err)
	}
	return st, nil
}

// AppendTurn stores w in one transaction, all of it or none, and returns
// the id of the conversation it appended to: one commit instead of one per
// part, as every commit waits its turn at the single writer.
func (db *DB) AppendTurn(ctx context.Context, w store.TurnWrite) (int64, error) {
	now := db.now()
	conv := w.ConversationID
	err := db.write(ctx, func(tx *sql.Tx) error {
		if conv == 0 {
			err := db.txRow(ctx, tx, activeConversationSQL, w.ChatID).Scan(&conv)
			if errors.Is(err, sql.ErrNoRows) {
				conv, err = db.startConversation(ctx, tx, w.ChatID)
			}
			if err != nil {
				return err
			}
		}
		if w.DeliverTask != 0 {
			if err := db.deliverTask(ctx, tx, w.DeliverTask, now); err != nil {
				return err
			}
		}
		if w.ReplaceFrom != 0 {
			if _, err := db.txExec(ctx, tx, replaceMessagesSQL, millis(now), conv, w.ReplaceFrom, w.ReplaceFrom, conv); err != nil {
				return fmt.Errorf("replace messages: %w", err)
			}
		}
		if err := db.insertMessages(ctx, tx, conv, now, w.Messages); err != nil {
			return err
		}
		for _, c := range w.ToolCalls {
			if _, err := db.txExec(ctx, tx, insertToolCallSQL, toolCallArgs(c, now)...); err != nil {
				return fmt.Errorf("record call of %s/%s: %w", c.Server, c.Tool, err)
			}
		}
		if err := db.addUsage(ctx, tx, now, w.Usage); err != nil {
			return fmt.Errorf("add token usage: %w", err)
		}
		if w.Turn != nil {
			if _, err := db.txExec(ctx, tx, insertTurnSQL, tables.TurnArgs(*w.Turn, now)...); err != nil {
				return fmt.Errorf("record turn %s: %w", w.Turn.TurnID, err)
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("append %d messages and %d tool calls to chat %q: %w", len(w.Messages), len(w.ToolCalls), w.ChatID, err)
	}
	return conv, nil
}

// Messages returns a conversation's messages, oldest first, without those
// a retry replaced. An unknown conversation has none.
func (db *DB) Messages(ctx context.Context, conversationID int64) ([]store.Message, error) {
	return db.messages(ctx, conversationID, messagesSQL, conversationID)
}

// RecentMessages returns the newest messages of a conversation that hold
// at least bytes bytes, oldest first (see store.Conversations): a range
// of the index messages_history, read newest first.
func (db *DB) RecentMessages(ctx context.Context, conversationID int64, bytes int) ([]store.Message, error) {
	if bytes <= 0 {
		return nil, nil
	}
	return db.messages(ctx, conversationID, recentMessagesSQL, conversationID, conversationID, bytes)
}

// MessagesSince returns a conversation's messages from the one with id id
// on (see store.Conversations): a range of the index messages_history.
func (db *DB) MessagesSince(ctx context.Context, conversationID, id int64, limit int) ([]store.Message, error) {
	if limit <= 0 {
		limit = -1 // SQLite's "no limit"
	}
	return db.messages(ctx, conversationID, messagesSinceSQL, conversationID, id, conversationID, id, limit)
}

func (db *DB) messages(ctx context.Context, conversationID int64, query string, args ...any) ([]store.Message, error) {
	rows, err := db.readRows(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("messages of conversation %d: %w", conversationID, err)
	}
	defer func() { _ = rows.Close() }()
	var msgs []store.Message
	var at int64
	var media string
	for rows.Next() {
		// Scanned in place: a message of its own would escape, one
		// allocation a row.
		msgs = append(msgs, store.Message{})
		m := &msgs[len(msgs)-1]
		if err := rows.Scan(&m.ID, &m.ConversationID, &m.Role, &m.Content,
			&m.PromptTokens, &m.CompletionTokens, &media, &m.OnlyFor, &m.Shared, &m.TurnID, &at); err != nil {
			return nil, fmt.Errorf("messages of conversation %d: %w", conversationID, err)
		}
		m.CreatedAt = fromMillis(at)
		m.Media = tables.SplitMedia(media)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("messages of conversation %d: %w", conversationID, err)
	}
	return msgs, nil
}
