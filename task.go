package mcpgram

import (
	"errors"
	"time"
)

// ErrTaskUnknown means a server does not know the task asked about, or
// refuses what was asked of it: it never ran, it expired, the server
// restarted, or it is already over (for a cancel).
var ErrTaskUnknown = errors.New("task unknown to its server")

// A TaskStatus is where a task stands, as its server says (MCP Tasks).
type TaskStatus string

// The statuses of a task. Working and input_required go on; the others
// are final.
const (
	TaskWorking       TaskStatus = "working"
	TaskInputRequired TaskStatus = "input_required"
	TaskCompleted     TaskStatus = "completed"
	TaskFailed        TaskStatus = "failed"
	TaskCancelled     TaskStatus = "cancelled"
)

// Known reports whether s is one of the statuses MCP defines.
func (s TaskStatus) Known() bool {
	switch s {
	case TaskWorking, TaskInputRequired, TaskCompleted, TaskFailed, TaskCancelled:
		return true
	}
	return false
}

// Final reports whether a task in status s will not change again.
func (s TaskStatus) Final() bool {
	return s == TaskCompleted || s == TaskFailed || s == TaskCancelled
}

// A Task is a tool call its server runs in the background: the server
// answered the call with this handle instead of the result, which it
// gives once the task completes (MCP Tasks: 2025-11-25's experimental
// form, or 2026-07-28's Tasks extension). A task belongs to the caller
// who started it, on the server that runs it.
type Task struct {
	// ID is the server's handle of the task.
	ID     string
	Status TaskStatus
	// StatusMessage is what the server says of its progress, for people;
	// bounded and on one line.
	StatusMessage string
	// CreatedAt is when the server created it, zero if it did not say.
	CreatedAt time.Time
	// TTL is how long from CreatedAt the server keeps it; 0 for as long as
	// it likes.
	TTL time.Duration
	// PollInterval is how often the server would like to be asked; 0 if
	// it did not say.
	PollInterval time.Duration
	// ModelNote is what the server would have the model told while the
	// task runs, "" if nothing (io.modelcontextprotocol/model-immediate-response).
	ModelNote string
}
