package store

import (
	"context"
	"fmt"
	"time"
)

// A ToolCall is one entry of the audit log: a tool called on an MCP server.
type ToolCall struct {
	ID        int64
	UserID    string
	ChatID    string
	Server    string
	Tool      string
	Arguments string // JSON as the model wrote it
	// Status is the caller's word for the outcome ("ok", "error",
	// "denied", ...); the store does not interpret it.
	Status string
	// Duration is stored in whole milliseconds.
	Duration    time.Duration
	ResultBytes int
	CreatedAt   time.Time
}

const insertToolCallSQL = `INSERT INTO tool_calls
	(user_id, chat_id, server, tool, arguments, status, duration_ms, result_bytes, created_at)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`

// RecordToolCall appends c to the audit log. Its ID is ignored; a zero
// CreatedAt means now.
func (db *DB) RecordToolCall(ctx context.Context, c ToolCall) error {
	_, err := db.writeExec(ctx, insertToolCallSQL, toolCallArgs(c, db.now())...)
	if err != nil {
		return fmt.Errorf("record call of %s/%s: %w", c.Server, c.Tool, err)
	}
	return nil
}

// toolCallArgs are insertToolCallSQL's arguments for c; a zero CreatedAt
// means now.
func toolCallArgs(c ToolCall, now time.Time) []any {
	at := c.CreatedAt
	if at.IsZero() {
		at = now
	}
	return []any{c.UserID, c.ChatID, c.Server, c.Tool, c.Arguments, c.Status,
		c.Duration.Milliseconds(), c.ResultBytes, millis(at)}
}

// ToolCalls returns up to limit audit entries, newest first; limit <= 0
// returns all.
func (db *DB) ToolCalls(ctx context.Context, limit int) ([]ToolCall, error) {
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
	var calls []ToolCall
	for rows.Next() {
		var c ToolCall
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
