package store

import "time"

// A Form is a question an MCP server asked a user in the middle of a tool
// call (an elicitation), open while the call waits for the answer. The
// call waits on one instance; the user's presses and replies may reach
// any other sharing the store, so the answers so far, and the answer
// once given, are kept here, where the waiting call reads them.
//
// A chat may have several forms open at once (the calls of one reply run
// in parallel), beside its open question or approval, which they neither
// supersede nor are superseded by.
type Form struct {
	ID     int64
	ChatID string
	UserID string // whose turn made the call; only they may answer
	// Payload is the question and the answers so far: JSON owned by the
	// agent. Version counts the saves of it, for SaveForm.
	Payload   string
	Version   int64
	CreatedAt time.Time
	ExpiresAt time.Time

	// ResolvedAt is zero while the form is open; Resolution is the
	// caller's word passed to SaveForm (e.g. "accept", "decline",
	// "cancel", "expired").
	ResolvedAt time.Time
	Resolution string
}

// IsOpen reports whether f is still waiting for the user.
func (f Form) IsOpen() bool { return f.ResolvedAt.IsZero() }
