package store

import (
	"context"
	"time"
)

// A Task is a tool call its MCP server runs in the background (MCP
// Tasks): the server answered the call with a handle, which is kept here
// with whom and what the call was for, so that polling resumes after a
// restart, on whichever instance holds the chat, and the outcome reaches
// the chat once. A task is open until it is finished (see
// [Tasks.FinishTask]).
type Task struct {
	ID int64
	// Server and Handle name the task: Handle is the server's id of it,
	// untrusted text the caller bounded.
	Server string
	Handle string
	Tool   string
	// ChatID is the conversation's key (a chat, or a forum topic's; see
	// [ChatSettings]); UserID who started the task, whose account and
	// sign-in its requests use, and who alone may stop it (with the
	// chat's admins).
	ChatID string
	UserID string
	// TurnID names the turn that started it, CallID its open tool call in
	// the conversation, and ReplyTo the message its answer replies to (0
	// for none).
	TurnID  string
	CallID  string
	ReplyTo int64
	// CardID is the message that shows it to the user, 0 until sent.
	CardID int64
	// Status and StatusMessage are the server's last word on it, as last
	// stored (see [Tasks.UpdateTask]).
	Status        string
	StatusMessage string
	// NextPoll is when to ask the server again, as last stored: polls
	// that change nothing store nothing, so it may be past.
	NextPoll time.Time
	// Deadline is when the task is given up on, zero for never.
	Deadline  time.Time
	CreatedAt time.Time
	// FinishedAt is when FinishTask was called, zero while it is open;
	// Outcome what it stored then.
	FinishedAt time.Time
	Outcome    []byte
	// DeliveredAt is when the turn that handed the outcome to the
	// conversation stored it (see [TurnWrite.DeliverTask]), zero until
	// then.
	DeliveredAt time.Time
	// Owner is the instance that polls the open task, empty for none yet,
	// and LeaseUntil when its claim lapses unless renewed (see
	// [Tasks.ClaimTasks]).
	Owner      string
	LeaseUntil time.Time
}

// Open reports whether t is not finished yet.
func (t Task) Open() bool { return t.FinishedAt.IsZero() }

// Delivered reports whether t's outcome was handed to its conversation.
func (t Task) Delivered() bool { return !t.DeliveredAt.IsZero() }

// Tasks keeps the tasks tool calls became (see [Task]).
//
// Where several instances share the store, each open task is polled by
// one of them, its owner, which holds a lease on it: it renews its leases
// together (RenewTasks), and an instance that dies leaves them to lapse,
// when another takes its tasks over (ClaimTasks). A lease decides who
// polls, not how a task ends: FinishTask stays the guard that hands an
// outcome on once, should two instances poll at a lease's edge.
type Tasks interface {
	// PutTask stores t, open, and returns its id. ID, FinishedAt and
	// Outcome are ignored; a zero CreatedAt means now. Storing the same
	// Server, UserID and Handle again stores nothing and returns the id
	// stored first (a retry is harmless).
	PutTask(ctx context.Context, t Task) (int64, error)
	// GetTask returns the task with the given id, open or not, or
	// ErrNotFound.
	GetTask(ctx context.Context, id int64) (Task, error)
	// OpenTasks returns the open tasks, soonest NextPoll first, at most
	// limit (all when limit <= 0): what a poller starts from.
	OpenTasks(ctx context.Context, limit int) ([]Task, error)
	// ChatTasks returns the open tasks of the conversation key, oldest
	// first.
	ChatTasks(ctx context.Context, key string) ([]Task, error)
	// UpdateTask stores a new status, status message and next poll of an
	// open task. A finished task gives ErrResolved, an unknown id
	// ErrNotFound. Callers write only what changed, not every poll.
	UpdateTask(ctx context.Context, id int64, status, message string, nextPoll time.Time) error
	// SetTaskCard stores the message that shows the task.
	SetTaskCard(ctx context.Context, id, cardID int64) error
	// FinishTask closes an open task with its final status, message and
	// outcome (the caller's encoding of what the conversation is given).
	// It is atomic: of two calls, from any processes, one succeeds and
	// the other gets ErrResolved, so an outcome is handed on once. An
	// unknown id gives ErrNotFound.
	FinishTask(ctx context.Context, id int64, status, message string, outcome []byte) error
	// UndeliveredTasks returns the finished tasks whose outcome no turn
	// has handed to its conversation yet, soonest finished first: what
	// is to be delivered, after a restart too.
	UndeliveredTasks(ctx context.Context) ([]Task, error)
	// ClaimTask takes the open task id for owner, its lease running until
	// until, and returns it, unless another owner's lease on it runs past
	// now: then ErrLeased. A finished task gives ErrResolved, an unknown
	// id ErrNotFound. A task with no owner is anyone's to take.
	ClaimTask(ctx context.Context, id int64, owner string, now, until time.Time) (Task, error)
	// ClaimTasks takes for owner, until until, in one write, the open
	// tasks whose lease ended at or before lapsed (owner's own among
	// them), and those of no owner stored at or before unowned, and
	// returns them, soonest NextPoll first. Two instances claiming at
	// once take each task once between them.
	ClaimTasks(ctx context.Context, owner string, lapsed, unowned, until time.Time) ([]Task, error)
	// RenewTasks extends to until, in one write, the leases owner holds
	// on the open tasks of ids, and returns how many it extended: a task
	// another instance took meanwhile stays that instance's. An until
	// past hands them back: they are anyone's to claim.
	RenewTasks(ctx context.Context, owner string, ids []int64, until time.Time) (int64, error)
	// PruneTasks deletes the tasks finished before the given time, and
	// returns how many it deleted.
	PruneTasks(ctx context.Context, before time.Time) (int64, error)
}
