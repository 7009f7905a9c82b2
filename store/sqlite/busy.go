package sqlite

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/mcpgram/mcpgram/store"
)

// busyTimeout is how long a statement waits for another process's lock
// (the busy_timeout pragma) before it fails with SQLITE_BUSY.
var busyTimeout = 5 * time.Second

// DefaultRetryFor is how long a write found busy is tried again, beyond
// its busy_timeout, before it fails with store.ErrUnavailable: another
// process (a backup, a second bot on the same file by mistake, the sqlite3
// shell) holding the write lock that long is gone or stuck, and the
// caller runs the work again later.
const DefaultRetryFor = 10 * time.Second

// Backoff between attempts, doubling, with up to a quarter of jitter.
const (
	retryFirst = 50 * time.Millisecond
	retryMax   = time.Second
)

// busy reports whether err is SQLite's "database is locked" (SQLITE_BUSY)
// or a table locked by another connection (SQLITE_LOCKED).
func busy(err error) bool {
	var e *sqlite.Error
	if !errors.As(err, &e) {
		return false
	}
	code := e.Code() & 0xff // the primary code of an extended one
	return code == sqlite3.SQLITE_BUSY || code == sqlite3.SQLITE_LOCKED
}

// whenFree runs op, a write, again while it finds the database busy, for
// up to db.retryFor, and then fails with store.ErrUnavailable. A write
// that found it busy did not happen: its transaction is rolled back, or
// never began (BEGIN IMMEDIATE takes the lock first), so running it again
// cannot do it twice.
func (db *DB) whenFree(ctx context.Context, op func() error) error {
	var deadline time.Time
	wait := retryFirst
	for {
		err := op()
		if err == nil || !busy(err) || ctx.Err() != nil {
			return err
		}
		if deadline.IsZero() {
			deadline = time.Now().Add(db.retryFor)
		}
		if time.Now().Add(wait).After(deadline) {
			return fmt.Errorf("%w: %w", store.ErrUnavailable, err)
		}
		t := time.NewTimer(wait + rand.N(wait/4+1))
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		wait = min(2*wait, retryMax)
	}
}
