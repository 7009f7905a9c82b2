package store

import "time"

// Kinds of pending interaction.
const (
	KindQuestion = "question"
	KindApproval = "approval"
)

// ResolutionSuperseded is the resolution [Interactions.CreatePending]
// gives to a chat's earlier open interaction.
const ResolutionSuperseded = "superseded"

// A Pending is a follow-up question or an approval waiting for the user.
// At most one per chat is open (not resolved) at a time.
type Pending struct {
	ID             int64
	ChatID         string
	UserID         string // whose turn asked; only they may answer
	ConversationID int64  // zero: none
	Kind           string // KindQuestion or KindApproval
	Payload        string // JSON owned by the agent
	CreatedAt      time.Time
	ExpiresAt      time.Time // zero: never

	// ResolvedAt is zero while the interaction is open.
	ResolvedAt time.Time
	// Resolution is the caller's word passed to ResolvePending, or
	// ResolutionSuperseded; empty while open.
	Resolution string
	// ResolvedBy is the turn that resolved it, as passed to
	// ResolvePending; "" for none.
	ResolvedBy string
}

// IsOpen reports whether p is still waiting for the user.
func (p Pending) IsOpen() bool { return p.ResolvedAt.IsZero() }
