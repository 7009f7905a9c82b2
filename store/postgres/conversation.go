package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/store/internal/tables"
)

const (
	activeConversationSQL = `SELECT id FROM conversations WHERE chat_id = $1 AND ended_at IS NULL`
	// insertMessageSQL counts the message's bytes onto the history's
	// (see RecentMessages), after the conversation's newest message that
	// is not replaced: one lookup at the end of messages_history.
	insertMessageSQL = `INSERT INTO messages
		(conversation_id, role, content, prompt_tokens, completion_tokens, media, only_for, shared, turn_id, created_at, history_bytes)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, octet_length($3) + coalesce((SELECT max(history_bytes)
			FROM messages WHERE conversation_id = $1 AND replaced_at IS NULL), 0))`
	// lockConversationSQL makes appends to one conversation run one after
	// another, so that each counts its bytes after the last one's.
	lockConversationSQL = `SELECT id FROM conversations WHERE id = $1 FOR UPDATE`
	messageColumns      = `id, conversation_id, role, content, prompt_tokens, completion_tokens, media, only_for, shared, turn_id, created_at`
)

// querier is what a pool and a transaction share.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// active returns the chat's active conversation, or pgx.ErrNoRows.
func active(ctx context.Context, q querier, chatID string) (int64, error) {
	var id int64
	err := q.QueryRow(ctx, activeConversationSQL, chatID).Scan(&id)
	return id, err
}

// activeOrStart returns the chat's active conversation, starting one if
// it has none, under the chat's lock.
func activeOrStart(ctx context.Context, tx pgx.Tx, chatID string) (int64, error) {
	if err := lockChat(ctx, tx, chatID, time.Now()); err != nil {
		return 0, err
	}
	// Another process may have started one before the lock was ours.
	id, err := active(ctx, tx, chatID)
	if errors.Is(err, pgx.ErrNoRows) {
		return startConversation(ctx, tx, chatID)
	}
	return id, err
}

// startConversation inserts a new active conversation; the caller holds
// the chat's lock and has ended any other.
func startConversation(ctx context.Context, tx pgx.Tx, chatID string) (int64, error) {
	var id int64
	err := tx.QueryRow(ctx, `INSERT INTO conversations (chat_id, created_at) VALUES ($1, $2) RETURNING id`,
		chatID, millis(time.Now())).Scan(&id)
	return id, err
}

// chatStateSQL is ChatState's statement.
var chatStateSQL = tables.ChatStateSQL("$1", "$2")

// ChatState reads what a turn needs of its chat before it starts, in one
// round trip (see store.ChatState).
func (db *DB) ChatState(ctx context.Context, key, chat string) (store.ChatState, error) {
	var st store.ChatState
	err := db.do(ctx, reads, func(int) error {
		var err error
		st, err = tables.ScanChatState(db.pool.QueryRow(ctx, chatStateSQL, key, chat).Scan)
		return err
	})
	if err != nil {
		return store.ChatState{}, fmt.Errorf("state of chat %q: %w", key, err)
	}
	return st, nil
}

// CurrentConversation returns the id of the chat's active conversation, or
// store.ErrNotFound when it has none. It never writes.
func (db *DB) CurrentConversation(ctx context.Context, chatID string) (int64, error) {
	var id int64
	err := db.do(ctx, reads, func(int) error {
		var err error
		id, err = active(ctx, db.pool, chatID)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("current conversation of chat %q: %w", chatID, notFound(err))
	}
	return id, nil
}

// ResetConversation ends the chat's active conversation, if any, and starts
// a new one whose id it returns. The old conversation stays.
func (db *DB) ResetConversation(ctx context.Context, chatID string) (int64, error) {
	var id int64
	// Idempotent in effect: a reset run again after its commit was lost
	// leaves one more empty conversation, which nobody reads.
	err := db.tx(ctx, idempotent, func(tx pgx.Tx) error {
		now := time.Now()
		if err := lockChat(ctx, tx, chatID, now); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE conversations SET ended_at = $1 WHERE chat_id = $2 AND ended_at IS NULL`,
			millis(now), chatID); err != nil {
			return err
		}
		var err error
		id, err = startConversation(ctx, tx, chatID)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("reset conversation of chat %q: %w", chatID, err)
	}
	return id, nil
}

// queueMessages adds the inserts of msgs to b, sent in one round trip.
func queueMessages(b *pgx.Batch, conversationID int64, now time.Time, msgs []store.Message) {
	if len(msgs) > 0 {
		b.Queue(lockConversationSQL, conversationID)
	}
	for _, m := range msgs {
		at := m.CreatedAt
		if at.IsZero() {
			at = now
		}
		b.Queue(insertMessageSQL, conversationID, text(m.Role), text(m.Content),
			m.PromptTokens, m.CompletionTokens, tables.JoinMedia(m.Media), text(m.OnlyFor), text(m.Shared), text(m.TurnID), millis(at))
	}
}

// AppendTurn stores w in one transaction, all of it or none, and returns
// the id of the conversation it appended to.
//
// A write is named by a key, stored in its transaction, so that it may
// run again after a lost connection, even one that lost the answer to
// its commit: the next attempt first looks the key up, and finding it,
// knows the first went in (the keys are kept an hour, see InboxPrune).
func (db *DB) AppendTurn(ctx context.Context, w store.TurnWrite) (int64, error) {
	now := time.Now()
	key := writeKey()
	var conv int64
	err := db.do(ctx, idempotent, func(attempt int) error {
		return db.txOnce(ctx, func(tx pgx.Tx) error {
			var err error
			conv, err = db.appendTurn(ctx, tx, w, key, attempt > 1, now)
			return err
		})
	})
	if err != nil {
		return 0, fmt.Errorf("append %d messages and %d tool calls to chat %q: %w", len(w.Messages), len(w.ToolCalls), w.ChatID, err)
	}
	return conv, nil
}

// appendTurn is one attempt of AppendTurn in tx; again says an attempt
// before it failed, and may have committed.
func (db *DB) appendTurn(ctx context.Context, tx pgx.Tx, w store.TurnWrite, key string, again bool, now time.Time) (int64, error) {
	conv := w.ConversationID
	if again {
		err := tx.QueryRow(ctx, `SELECT conversation_id FROM turn_writes WHERE key = $1`, key).Scan(&conv)
		if err == nil || !errors.Is(err, pgx.ErrNoRows) {
			return conv, err // in already, or the lookup failed
		}
	}
	if conv == 0 {
		var err error
		if conv, err = active(ctx, tx, w.ChatID); errors.Is(err, pgx.ErrNoRows) {
			conv, err = activeOrStart(ctx, tx, w.ChatID)
		}
		if err != nil {
			return 0, err
		}
	}
	if w.DeliverTask != 0 {
		if err := deliverTask(ctx, tx, w.DeliverTask, now); err != nil {
			return 0, err
		}
	}
	b := &pgx.Batch{}
	b.Queue(`INSERT INTO turn_writes (key, conversation_id, created_at) VALUES ($1, $2, $3)`, key, conv, millis(now))
	if w.ReplaceFrom != 0 {
		// A range of messages_history from that message's place (the
		// conversation's whole range when it is not one of its messages).
		b.Queue(`UPDATE messages SET replaced_at = $1 WHERE conversation_id = $2 AND replaced_at IS NULL AND id >= $3
			AND history_bytes >= coalesce((SELECT history_bytes FROM messages
				WHERE id = $3 AND conversation_id = $2 AND replaced_at IS NULL), 0)`,
			millis(now), conv, w.ReplaceFrom)
	}
	queueMessages(b, conv, now, w.Messages)
	for _, c := range w.ToolCalls {
		b.Queue(insertToolCallSQL, toolCallArgs(c, now)...)
	}
	queueUsage(b, now, w.Usage)
	if w.Turn != nil {
		b.Queue(insertTurnSQL, turnArgs(*w.Turn, now)...)
	}
	return conv, tx.SendBatch(ctx, b).Close()
}

// writeKey names a write: 128 random bits, unique wherever it is made.
func writeKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails
	return hex.EncodeToString(b[:])
}

// Messages returns a conversation's messages, oldest first, without those
// a retry replaced. An unknown conversation has none.
func (db *DB) Messages(ctx context.Context, conversationID int64) ([]store.Message, error) {
	return db.messages(ctx, conversationID, `SELECT `+messageColumns+`
		FROM messages WHERE conversation_id = $1 AND replaced_at IS NULL ORDER BY history_bytes, id`, conversationID)
}

// RecentMessages returns the newest messages of a conversation that hold
// at least bytes bytes, oldest first (see store.Conversations): a range
// of the index messages_history, read newest first.
func (db *DB) RecentMessages(ctx context.Context, conversationID int64, bytes int) ([]store.Message, error) {
	if bytes <= 0 {
		return nil, nil
	}
	return db.messages(ctx, conversationID, `SELECT `+messageColumns+`
		FROM messages WHERE conversation_id = $1 AND replaced_at IS NULL
			AND history_bytes > (SELECT coalesce(max(history_bytes), 0) FROM messages
				WHERE conversation_id = $1 AND replaced_at IS NULL) - $2
		ORDER BY history_bytes, id`, conversationID, bytes)
}

// MessagesSince returns a conversation's messages from the one with id id
// on (see store.Conversations): a range of the index messages_history,
// which holds no replaced message to pass over (a retry leaves some after
// the message read from), in its order (history_bytes grows with id).
func (db *DB) MessagesSince(ctx context.Context, conversationID, id int64, limit int) ([]store.Message, error) {
	return db.messages(ctx, conversationID, `SELECT `+messageColumns+`
		FROM messages WHERE conversation_id = $1 AND replaced_at IS NULL
			AND history_bytes >= (SELECT history_bytes FROM messages
				WHERE id = $2 AND conversation_id = $1 AND replaced_at IS NULL) AND id >= $2
		ORDER BY history_bytes, id LIMIT $3`, conversationID, id, limitArg(limit))
}

func (db *DB) messages(ctx context.Context, conversationID int64, query string, args ...any) ([]store.Message, error) {
	msgs, err := collect(ctx, db, query, args, func(row pgx.CollectableRow) (store.Message, error) {
		var m store.Message
		var at int64
		var media string
		err := row.Scan(&m.ID, &m.ConversationID, &m.Role, &m.Content, &m.PromptTokens, &m.CompletionTokens, &media, &m.OnlyFor, &m.Shared, &m.TurnID, &at)
		m.CreatedAt = fromMillis(at)
		m.Media = tables.SplitMedia(media)
		return m, err
	})
	if err != nil {
		return nil, fmt.Errorf("messages of conversation %d: %w", conversationID, err)
	}
	if len(msgs) == 0 {
		return nil, nil // as the SQLite store: no messages is a nil slice
	}
	return msgs, nil
}
