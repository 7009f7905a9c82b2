package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mcpgram/mcpgram/store"
)

// DefaultRetryFor is how long a call retries a lost connection before it
// gives up with store.ErrUnavailable: longer than a restart takes (a
// fast one is back within a second), shorter than a turn should stall;
// a failover of a minute is the caller's to wait out (the bot leaves the
// update in the inbox and runs it again once the database answers).
const DefaultRetryFor = 10 * time.Second

// Backoff between attempts: doubling from retryFirst up to retryMax, with
// up to a quarter of jitter, so that instances cut off together do not
// come back in step.
const (
	retryFirst = 50 * time.Millisecond
	retryMax   = time.Second
)

// An effect is what a call does, which decides when it may run again
// after a lost connection.
type effect int

const (
	// reads change nothing: always run again.
	reads effect = iota
	// idempotent writes leave, run twice, what they leave run once:
	// always run again.
	idempotent
	// once writes must not run twice: run again only when the failure
	// shows they did not run (the connection could not be had, the
	// server refused or aborted the statement, or a transaction failed
	// before its commit was sent).
	once
	// noRetry calls are never run again, their callers doing without (the
	// shared rates, which count in memory meanwhile): a lost connection
	// only resets the pool, for the next call.
	noRetry
)

// errCommit marks an error of a transaction's commit: the commit may
// have gone in, its answer lost.
type errCommit struct{ error }

func (e errCommit) Unwrap() error { return e.error }

// lost reports whether err is a lost connection, and whether what was
// sent may have taken effect all the same (maybe).
func lost(err error) (isLost, maybe bool) {
	// A commit whose answer did not come may have gone in, whatever came
	// instead: a backend ended just after its commit still says 57P01.
	maybe = errors.As(err, new(errCommit))
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		// Said by the server: the statement was refused, or aborted with
		// its transaction (57P01 admin shutdown, 57P02 crash shutdown,
		// 57P03 cannot connect now, class 08 connection exception).
		c := pgErr.Code
		return strings.HasPrefix(c, "08") || c == "57P01" || c == "57P02" || c == "57P03", maybe
	}
	var connErr *pgconn.ConnectError
	switch {
	case errors.As(err, &connErr), errors.Is(err, pgconn.ErrConnClosed):
		return true, maybe // no connection: nothing was sent, unless a commit was
	case pgconn.SafeToRetry(err) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded):
		return true, maybe
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.EPIPE), errors.Is(err, net.ErrClosed):
		return true, true
	}
	var netErr *net.OpError
	return errors.As(err, &netErr), true
}

// do runs op until it succeeds, fails for good, or a lost connection
// outlasts db.retryFor; what effect e allows decides whether a lost
// connection is tried again (see effect). The pool is reset at each loss,
// so that the next attempt takes a fresh connection rather than another
// one the restart killed. A failure through a lost connection wraps
// store.ErrUnavailable. op gets the attempt's number, from 1.
func (db *DB) do(ctx context.Context, e effect, op func(attempt int) error) error {
	var deadline time.Time
	wait := retryFirst
	for attempt := 1; ; attempt++ {
		err := op(attempt)
		if err == nil || ctx.Err() != nil {
			return err
		}
		isLost, maybe := lost(err)
		if !isLost {
			return err
		}
		db.pool.Reset()
		if deadline.IsZero() {
			deadline = time.Now().Add(db.retryFor)
		}
		if e == noRetry || (maybe && e == once) || time.Now().Add(wait).After(deadline) {
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

// collect runs a query and collects its rows with scan, through do as
// reads: rows read before a connection was lost are read again.
func collect[T any](ctx context.Context, db *DB, query string, args []any, scan pgx.RowToFunc[T]) ([]T, error) {
	return collectAs(ctx, db, reads, query, args, scan)
}

// collectAs is collect for a statement of effect e that returns rows (an
// UPDATE ... RETURNING).
func collectAs[T any](ctx context.Context, db *DB, e effect, query string, args []any, scan pgx.RowToFunc[T]) ([]T, error) {
	var out []T
	err := db.do(ctx, e, func(int) error {
		rows, err := db.pool.Query(ctx, query, args...)
		if err == nil {
			out, err = pgx.CollectRows(rows, scan)
		}
		return err
	})
	return out, err
}

// row runs a query of one row and scans it into dest, through do as
// reads.
func (db *DB) row(ctx context.Context, query string, args []any, dest ...any) error {
	return db.do(ctx, reads, func(int) error { return db.pool.QueryRow(ctx, query, args...).Scan(dest...) })
}

// exec runs a statement through do as effect e.
func (db *DB) exec(ctx context.Context, e effect, query string, args ...any) (pgconn.CommandTag, error) {
	var tag pgconn.CommandTag
	err := db.do(ctx, e, func(int) error {
		var err error
		tag, err = db.pool.Exec(ctx, query, args...)
		return err
	})
	return tag, err
}

// tx runs fn in one transaction, committed if fn returns nil, through do:
// a transaction that failed before its commit was sent was rolled back,
// and runs again whatever its effect. fn may run several times: it must
// not carry state from one run to the next.
func (db *DB) tx(ctx context.Context, e effect, fn func(tx pgx.Tx) error) error {
	return db.do(ctx, e, func(int) error { return db.txOnce(ctx, fn) })
}

// txOnce runs fn in one transaction.
func (db *DB) txOnce(ctx context.Context, fn func(tx pgx.Tx) error) error {
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback(ctx)
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return errCommit{err}
	}
	return nil
}
