package tables

import (
	"cmp"
	"context"
	"fmt"
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

// ClaimedOne is what store.Tasks.ClaimTask returns of a claim of task id
// that took ts or failed with err: the task taken, or why it was not,
// told by the task as get reads it.
func ClaimedOne(ctx context.Context, id int64, ts []store.Task, err error, get func(context.Context, int64) (store.Task, error)) (store.Task, error) {
	if err == nil && len(ts) == 0 {
		err = unclaimed(get(ctx, id))
	}
	if err != nil {
		return store.Task{}, fmt.Errorf("claim task %d: %w", id, err)
	}
	return ts[0], nil
}

// Claimed is what store.Tasks.ClaimTasks returns of a claim for owner
// that took ts or failed with err: ts soonest next poll first (an UPDATE
// returns its rows in no order), nil for none.
func Claimed(owner string, ts []store.Task, err error) ([]store.Task, error) {
	if err != nil {
		return nil, fmt.Errorf("claim tasks for %q: %w", owner, err)
	}
	if len(ts) == 0 {
		return nil, nil
	}
	slices.SortFunc(ts, func(a, b store.Task) int {
		return cmp.Or(a.NextPoll.Compare(b.NextPoll), cmp.Compare(a.ID, b.ID))
	})
	return ts, nil
}

// unclaimed is why an open task could not be claimed, from the task as
// read after the claim took nothing.
func unclaimed(t store.Task, err error) error {
	switch {
	case err != nil:
		return err
	case !t.Open():
		return store.ErrResolved
	}
	return store.ErrLeased
}
