package store

import "time"

// A Message is one entry of a conversation's history.
type Message struct {
	ID             int64
	ConversationID int64
	// Role is the model API's role ("system", "user", "assistant", ...);
	// the store does not interpret it.
	Role    string
	Content string
	// PromptTokens and CompletionTokens are the model's usage for the call
	// that produced the message, zero when not known.
	PromptTokens     int
	CompletionTokens int
	// Media are the images the message carries, by reference (see
	// [Images.MediaPut]), in order; an image may be gone since (see
	// [Images.MediaPrune]).
	Media []string
	// OnlyFor, when not "", is the one user whose turns read the message
	// as it is: in a group, what a tool that acts per user (the memory
	// server's) found for one member, and what the model made of it. Other members'
	// turns read Shared in its place, or nothing when Shared is "". The
	// store keeps and returns both; who reads what is the caller's.
	OnlyFor string
	// Shared is what the other members read of a message kept OnlyFor
	// one: the answer as the group saw it, without what led to it.
	Shared string
	// TurnID, when not "", names the turn whose request the message is:
	// the user's message of a turn a Telegram update started, whose id
	// the update's draws (so that the update run again after a crash
	// finds what its turn stored already).
	TurnID    string
	CreatedAt time.Time
}

// A TurnWrite is what a turn of the agent stores at once, in one
// transaction (see [Conversations.AppendTurn]).
type TurnWrite struct {
	// ChatID is the chat the turn runs in.
	ChatID string
	// ConversationID to append to; 0 means the chat's active conversation,
	// started if the chat has none.
	ConversationID int64
	// Messages to append. Their ID and ConversationID fields are ignored;
	// a zero CreatedAt means now.
	Messages []Message
	// ToolCalls to add to the audit log (see [AuditLog.RecordToolCall]).
	ToolCalls []ToolCall
	// Usage to add to the users' token counts (see [Usage]).
	Usage []Usage
	// Turn, when set, records how the turn ended and its model calls, for
	// /stats (see [Statistics.RecordTurn]): a turn whose last write is
	// known to be its last saves a commit.
	Turn *TurnRecord
	// ReplaceFrom, when not 0, marks the conversation's messages from this
	// id on as replaced before the new ones are added (/retry): they stay
	// stored, and Messages no longer returns them.
	ReplaceFrom int64
	// DeliverTask, when not 0, marks that finished task delivered (see
	// [Task.DeliveredAt]) with the messages that hand its outcome to the
	// conversation: of two writes that deliver one task, from any
	// processes, one goes in and the other fails with ErrResolved,
	// storing nothing (ErrNotFound for an unknown task, ErrResolved for
	// one not finished).
	DeliverTask int64
}
