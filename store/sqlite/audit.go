package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/store/internal/tables"
)

const insertToolCallSQL = `INSERT INTO tool_calls
	(user_id, chat_id, server, tool, arguments, status, duration_ms, result_bytes, created_at)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`

// RecordToolCall appends c to the audit log. Its ID is ignored; a zero
// CreatedAt means now.
func (db *DB) RecordToolCall(ctx context.Context, c store.ToolCall) error {
	_, err := db.writeExec(ctx, insertToolCallSQL, toolCallArgs(c, db.now())...)
	if err != nil {
		return fmt.Errorf("record call of %s/%s: %w", c.Server, c.Tool, err)
	}
	return nil
}

// recentToolsSQL reads the chat's last audit rows: a range of
// tool_calls_chat, newest first.
const recentToolsSQL = `SELECT server, tool, status FROM tool_calls WHERE chat_id = ? ORDER BY id DESC LIMIT ?`

// RecentTools returns the tools that ran among the chat's last calls
// audit rows, each once, the most recently used first.
func (db *DB) RecentTools(ctx context.Context, chatID string, calls int) ([]store.ToolRef, error) {
	rows, err := db.readRows(ctx, recentToolsSQL, chatID, calls)
	if err != nil {
		return nil, fmt.Errorf("recent tools of chat %q: %w", chatID, err)
	}
	defer func() { _ = rows.Close() }()
	var out []store.ToolRef
	for rows.Next() {
		var r store.ToolRef
		var status string
		if err := rows.Scan(&r.Server, &r.Tool, &status); err != nil {
			return nil, fmt.Errorf("recent tools of chat %q: %w", chatID, err)
		}
		out = tables.AddRecentTool(out, r, status)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("recent tools of chat %q: %w", chatID, err)
	}
	return out, nil
}

// toolCallArgs are insertToolCallSQL's arguments for c; a zero CreatedAt
// means now.
func toolCallArgs(c store.ToolCall, now time.Time) []any {
	at := c.CreatedAt
	if at.IsZero() {
		at = now
	}
	return []any{c.UserID, c.ChatID, c.Server, c.Tool, c.Arguments, c.Status,
		c.Duration.Milliseconds(), c.ResultBytes, millis(at)}
}

// ToolCalls returns up to limit audit entries, newest first; limit <= 0
// returns all.
func (db *DB) ToolCalls(ctx context.Context, limit int) ([]store.ToolCall, error) {
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	rows, err := db.reader.QueryContext(ctx, `SELECT id, user_id, chat_id, server, tool,
		arguments, status, duration_ms, result_bytes, created_at
		FROM tool_calls ORDER BY id DESC LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("list tool calls: %w", err)
	}
	defer func() { _ = rows.Close() }()
	var calls []store.ToolCall
	for rows.Next() {
		var c store.ToolCall
		var ms, at int64
		if err := rows.Scan(&c.ID, &c.UserID, &c.ChatID, &c.Server, &c.Tool,
			&c.Arguments, &c.Status, &ms, &c.ResultBytes, &at); err != nil {
			return nil, fmt.Errorf("list tool calls: %w", err)
		}
		c.Duration = time.Duration(ms) * time.Millisecond
		c.CreatedAt = fromMillis(at)
		calls = append(calls, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list tool calls: %w", err)
	}
	return calls, nil
}
