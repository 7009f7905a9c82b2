package dispatch_test

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/dispatch"
	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/store/sqlite"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// errAway is what a flaky inbox says while its database is away.
var errAway = errors.New("the database is away")

// A flaky inbox fails its reads and marks while down, counting them.
type flaky struct {
	*sqlite.DB
	down                     atomic.Bool
	failedReads, failedMarks atomic.Int64
}

func (f *flaky) InboxQueued(ctx context.Context, after int64, limit int) ([]store.InboxItem, error) {
	if f.down.Load() {
		f.failedReads.Add(1)
		return nil, errAway
	}
	return f.DB.InboxQueued(ctx, after, limit)
}

func (f *flaky) InboxDone(ctx context.Context, ids ...int64) error {
	if f.down.Load() {
		f.failedMarks.Add(1)
		return errAway
	}
	return f.DB.InboxDone(ctx, ids...)
}

// ClaimQueued is the flaky inbox as a Claimer of one instance: every
// queued item is its own.
func (f *flaky) ClaimQueued(ctx context.Context, c store.Claim) ([]store.InboxItem, error) {
	return f.InboxQueued(ctx, c.After, c.Limit)
}

func (f *flaky) ReleaseLeases(context.Context, string) error { return nil }

// A run is one run of an item, with which attempt it was.
type run struct{ id, attempt int64 }

// A job that cannot do its work now asks to run again: its item stays in
// the inbox, not marked done, and runs again once the inbox can be read
// again, before the items behind it in its lane; other lanes go on. Each
// run knows its item by the update's id (dispatch.ItemID), the same at
// every run.
func TestRunAgain(t *testing.T) {
	inbox := &flaky{DB: openInbox(t, "a", "a", "b")}
	var r testenv.List[run]
	q := start(t, inbox, func(it store.InboxItem) dispatch.Job {
		return dispatch.Job{Lane: it.ChatID, Run: func(ctx context.Context) {
			n := dispatch.Attempt(ctx)
			r.Add(run{dispatch.ItemID(ctx), int64(n)})
			if it.UpdateID == 1 && n == 1 {
				inbox.down.Store(true) // the database went away mid-job
				dispatch.RunAgain(ctx)
			}
		}}
	}, dispatch.Options{Interval: 20 * time.Millisecond})
	// While the inbox cannot be read, the item waits: reads fail, and it
	// has run once, not marked done.
	waitFor(t, func() bool { return inbox.failedReads.Load() >= 3 })
	if got := r.All(); !slices.Contains(got, run{1, 1}) || slices.Contains(got, run{1, 2}) || slices.ContainsFunc(got, func(x run) bool { return x.id == 2 }) {
		t.Errorf("with the inbox down, ran %v; want item 1 once and item 2 not yet", got)
	}
	inbox.down.Store(false)
	waitFor(t, func() bool { return len(queued(t, inbox.DB)) == 0 })
	closeQueue(t, q)
	got := r.All()
	lane := slices.DeleteFunc(slices.Clone(got), func(x run) bool { return x.id == 3 })
	if want := []run{{1, 1}, {1, 2}, {2, 1}}; !slices.Equal(lane, want) {
		t.Errorf("lane a ran %v, want %v", lane, want)
	}
	if !slices.Contains(got, run{3, 1}) {
		t.Errorf("lane b did not run: %v", got)
	}
}

// A done mark that cannot be written is written once the inbox takes it,
// without a restart: the item does not stay queued to run again later.
func TestMarksWrittenOnceBack(t *testing.T) {
	inbox := &flaky{DB: openInbox(t, "a")}
	var r testenv.List[run]
	q := start(t, inbox, func(it store.InboxItem) dispatch.Job {
		return dispatch.Job{Lane: it.ChatID, Run: func(ctx context.Context) {
			r.Add(run{it.UpdateID, int64(dispatch.Attempt(ctx))})
			inbox.down.Store(true) // gone before the mark
		}}
	}, dispatch.Options{Interval: 20 * time.Millisecond})
	waitFor(t, func() bool { return inbox.failedMarks.Load() >= 1 })
	inbox.down.Store(false)
	waitFor(t, func() bool { return len(queued(t, inbox.DB)) == 0 })
	closeQueue(t, q)
	if got := r.All(); len(got) != 1 {
		t.Errorf("ran %v, want once", got)
	}
}

// An instance that could not renew its leases for most of their time may
// have lost its chats to another: it starts no next item of a chat until
// a read of the inbox shows the chat is still its own.
func TestStaleLeaseStartsNothing(t *testing.T) {
	inbox := &flaky{DB: openInbox(t, "a", "a")}
	release := make(chan struct{})
	var r testenv.List[run]
	q := start(t, inbox, func(it store.InboxItem) dispatch.Job {
		return dispatch.Job{Lane: it.ChatID, Run: func(ctx context.Context) {
			r.Add(run{it.UpdateID, int64(dispatch.Attempt(ctx))})
			if it.UpdateID == 1 {
				<-release
			}
		}}
	}, dispatch.Options{Leases: inbox, LeaseFor: 300 * time.Millisecond})
	waitFor(t, func() bool { return len(r.All()) == 1 })
	inbox.down.Store(true)
	// Reads fail for longer than two thirds of a lease.
	deadline := time.Now().Add(250 * time.Millisecond)
	waitFor(t, func() bool { return inbox.failedReads.Load() >= 3 && time.Now().After(deadline) })
	close(release)
	before := inbox.failedReads.Load()
	waitFor(t, func() bool { return inbox.failedReads.Load() >= before+2 })
	if got := r.All(); len(got) != 1 {
		t.Errorf("with the leases stale, ran %v; want item 2 held back", got)
	}
	inbox.down.Store(false)
	waitFor(t, func() bool { return len(queued(t, inbox.DB)) == 0 })
	closeQueue(t, q)
	if got := r.All(); !slices.Equal(got, []run{{1, 1}, {2, 1}}) {
		t.Errorf("ran %v, want 1 then 2", got)
	}
}
