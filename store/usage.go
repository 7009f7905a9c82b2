package store

import "time"

// A Usage is the tokens of one or more model calls made for a user, added
// to the user's UTC day.
type Usage struct {
	UserID string
	Model  string
	// At is when the calls were made; zero means now. Only its UTC day
	// is kept.
	At time.Time
	// Calls counts the model calls; 0 counts as 1.
	Calls int
	// In and Out are the tokens the model read and wrote.
	In, Out int
	// Estimated says In and Out were estimated, as the provider reported
	// no usage.
	Estimated bool
}

// Tokens are the totals of a set of model calls.
type Tokens struct {
	Calls   int64
	In, Out int64
	// EstimatedIn and EstimatedOut are the part of In and Out that was
	// estimated.
	EstimatedIn, EstimatedOut int64
}

// Total is In plus Out.
func (t Tokens) Total() int64 { return t.In + t.Out }

// Estimated reports whether some of the tokens were estimated.
func (t Tokens) Estimated() bool { return t.EstimatedIn+t.EstimatedOut > 0 }

// UserUsage is one user's tokens today and this month, UTC.
type UserUsage struct {
	Today, Month Tokens
}

// UserTokens is the tokens of one user over a period.
type UserTokens struct {
	UserID string
	Tokens
}
