package tables

import (
	"cmp"
	"slices"

	"github.com/mcpgram/mcpgram/store"
)

// LeaseMillis is t's lease expiry as both engines store it, in
// milliseconds: 0 for none.
func LeaseMillis(t store.Task) int64 {
	if t.LeaseUntil.IsZero() {
		return 0
	}
	return t.LeaseUntil.UnixMilli()
}

// SortClaimed orders the tasks a claim returned as store.Tasks.ClaimTasks
// promises, soonest next poll first: an UPDATE returns its rows in no
// order.
func SortClaimed(ts []store.Task) {
	slices.SortFunc(ts, func(a, b store.Task) int {
		return cmp.Or(a.NextPoll.Compare(b.NextPoll), cmp.Compare(a.ID, b.ID))
	})
}

// Unclaimed is why an open task could not be claimed, from the task as
// read after the claim took nothing.
func Unclaimed(t store.Task, err error) error {
	switch {
	case err != nil:
		return err
	case !t.Open():
		return store.ErrResolved
	}
	return store.ErrLeased
}
