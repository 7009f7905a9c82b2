package store

import (
	"context"
	"time"
)

// A Link is a resource link a tool returned in a chat, kept for the
// button that opens it: the button's data holds only Key, and whoever
// presses it, on whichever instance and after any restart, finds the rest
// here. Links are bounded per chat (see [Links.PutLink]) and expire.
type Link struct {
	// Key is the caller's random name for the link, unique, at most 64
	// bytes.
	Key    string
	ChatID string
	UserID string // whose turn the tool ran for; only they may open it
	// Server, URI and Name are what the tool returned: untrusted text.
	Server    string
	URI       string
	Name      string
	CreatedAt time.Time
	ExpiresAt time.Time
}

// Links keeps the resource links tools returned (see [Link]).
type Links interface {
	// PutLink stores l and, in the same transaction, deletes the chat's
	// links expired at l.CreatedAt and those beyond its keep newest
	// (l among them). A zero CreatedAt means now. Storing a key again
	// changes nothing (a retry is harmless).
	PutLink(ctx context.Context, l Link, keep int) error
	// GetLink returns the link with the given key, or ErrNotFound. A link
	// past its ExpiresAt is still returned until pruned: expiry is decided
	// by the caller.
	GetLink(ctx context.Context, key string) (Link, error)
	// PruneLinks deletes the links expired at or before now, and returns
	// how many went.
	PruneLinks(ctx context.Context, now time.Time) (int64, error)
}
