package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/store/internal/tables"
)

const insertToolCallSQL = `INSERT INTO tool_calls
	(user_id, chat_id, server, tool, arguments, status, duration_ms, result_bytes, created_at)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`

// RecordToolCall appends c to the audit log. Its ID is ignored; a zero
// CreatedAt means now.
func (db *DB) RecordToolCall(ctx context.Context, c store.ToolCall) error {
	// Once: a second run would log the call twice.
	if _, err := db.exec(ctx, once, insertToolCallSQL, toolCallArgs(c, time.Now())...); err != nil {
		return fmt.Errorf("record call of %s/%s: %w", c.Server, c.Tool, err)
	}
	return nil
}

// RecentTools returns the tools that ran among the chat's last calls
// audit rows, each once, the most recently used first: a range of
// tool_ranchat, newest first.
func (db *DB) RecentTools(ctx context.Context, chatID string, calls int) ([]store.ToolRef, error) {
	type call struct {
		ref    store.ToolRef
		status string
	}
	ran, err := collect(ctx, db, `SELECT server, tool, status FROM tool_calls WHERE chat_id = $1 ORDER BY id DESC LIMIT $2`,
		[]any{text(chatID), calls}, func(row pgx.CollectableRow) (call, error) {
			var c call
			err := row.Scan(&c.ref.Server, &c.ref.Tool, &c.status)
			return c, err
		})
	if err != nil {
		return nil, fmt.Errorf("recent tools of chat %q: %w", chatID, err)
	}
	var out []store.ToolRef
	for _, c := range ran {
		out = tables.AddRecentTool(out, c.ref, c.status)
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
	return []any{text(c.UserID), text(c.ChatID), text(c.Server), text(c.Tool), text(c.Arguments), text(c.Status),
		c.Duration.Milliseconds(), c.ResultBytes, millis(at)}
}

// ToolCalls returns up to limit audit entries, newest first; limit <= 0
// returns all.
func (db *DB) ToolCalls(ctx context.Context, limit int) ([]store.ToolCall, error) {
	calls, err := collect(ctx, db, `SELECT id, user_id, chat_id, server, tool,
		arguments, status, duration_ms, result_bytes, created_at
		FROM tool_calls ORDER BY id DESC LIMIT $1`, []any{limitArg(limit)}, func(row pgx.CollectableRow) (store.ToolCall, error) {
		var c store.ToolCall
		var ms, at int64
		err := row.Scan(&c.ID, &c.UserID, &c.ChatID, &c.Server, &c.Tool,
			&c.Arguments, &c.Status, &ms, &c.ResultBytes, &at)
		c.Duration = time.Duration(ms) * time.Millisecond
		c.CreatedAt = fromMillis(at)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("list tool calls: %w", err)
	}
	if len(calls) == 0 {
		return nil, nil
	}
	return calls, nil
}

// limitArg is a LIMIT's argument: NULL, no limit, for limit <= 0.
func limitArg(limit int) *int64 {
	if limit <= 0 {
		return nil
	}
	n := int64(limit)
	return &n
}
