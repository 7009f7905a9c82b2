package store

import "time"

// A ToolCall is one entry of the audit log: a tool called on an MCP server.
type ToolCall struct {
	ID        int64
	UserID    string
	ChatID    string
	Server    string
	Tool      string
	Arguments string // JSON as the model wrote it
	// Status is the caller's word for the outcome ("ok", "error",
	// "denied", ...); the store does not interpret it, except that /stats
	// counts "ok" and "error" as calls that ran, "error" as failed, and
	// "denied" and "expired" as denied.
	Status string
	// Duration is stored in whole milliseconds.
	Duration    time.Duration
	ResultBytes int
	CreatedAt   time.Time
}

// A ToolRef names one tool of one server.
type ToolRef struct {
	Server, Tool string
}
