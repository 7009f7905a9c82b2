package store

import "time"

// An InboxItem is a Telegram update as received, kept until it is handled.
type InboxItem struct {
	UpdateID int64
	ChatID   string // empty for updates without a chat
	Payload  []byte // the update's JSON; empty once done
	// ReceivedAt defaults to now on InboxPut.
	ReceivedAt time.Time
}

// A Claim asks a shared inbox for the items of the chats one instance
// leases (see [Leases]).
type Claim struct {
	// Instance names the claiming process, unique among those sharing the
	// inbox and new at each start.
	Instance string
	// After and Limit page the items returned, in update id order.
	After int64
	Limit int
	// NewChats caps the chats taken in one call, so that one instance
	// does not take every waiting chat while others idle.
	NewChats int
	// LeaseFor is how long the instance's leases last from this call,
	// unless a later call renews them.
	LeaseFor time.Duration
}
