package sqlite

import (
	"context"
	"database/sql"
	"io/fs"
	"time"
)

// OpenWithMigrations is Open with the migrations taken from fsys, each
// applied in turn (a new database is not made from the schema they give).
func OpenWithMigrations(ctx context.Context, path string, fsys fs.FS) (*DB, error) {
	return open(ctx, path, fsys, false)
}

// Dump lists what db's schema holds, in the order it was made.
func Dump(ctx context.Context, db *DB) ([]string, error) { return dump(ctx, db.reader) }

// MadeFromSchema reports whether Open made db's file, new, from the schema
// the migrations give.
func MadeFromSchema(db *DB) bool { return db.madeFromSchema }

// WriterSynchronous reports the writer connection's synchronous level
// (1 NORMAL, 2 FULL).
func WriterSynchronous(ctx context.Context, db *DB) (int, error) {
	var v int
	err := db.writer.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&v)
	return v, err
}

// WriteFull runs fn the way the inbox writes run.
func WriteFull(ctx context.Context, db *DB, fn func(*sql.Tx) error) error {
	return db.writeFull(ctx, false, fn)
}

// QueryInt runs a query returning one integer on a reader connection.
func QueryInt(ctx context.Context, db *DB, query string, args ...any) (int64, error) {
	var v int64
	err := db.reader.QueryRowContext(ctx, query, args...).Scan(&v)
	return v, err
}

// HoldWriter takes the writer connection until release is called, so tests
// can make writes queue.
func HoldWriter(ctx context.Context, db *DB) (release func(), err error) {
	conn, err := db.writer.Conn(ctx)
	if err != nil {
		return nil, err
	}
	return func() { _ = conn.Close() }, nil
}

// Pragmas holds n connections of the reader pool (or the writer's one, when
// n is 0) at once and reports the settings each has.
func Pragmas(ctx context.Context, db *DB, n int) ([]map[string]string, error) {
	pool, count := db.reader, n
	if n == 0 {
		pool, count = db.writer, 1
	}
	var out []map[string]string
	for range count {
		conn, err := pool.Conn(ctx)
		if err != nil {
			return nil, err
		}
		defer func() { _ = conn.Close() }()
		m := map[string]string{}
		for _, name := range []string{"busy_timeout", "journal_mode", "synchronous", "foreign_keys", "query_only"} {
			var v string
			if err := conn.QueryRowContext(ctx, "PRAGMA "+name).Scan(&v); err != nil {
				return nil, err
			}
			m[name] = v
		}
		out = append(out, m)
	}
	return out, nil
}

// Unprepared counts the statements run through the prepared-statement
// helpers without having been prepared at Open.
func Unprepared(db *DB) int64 { return db.misses.Load() }

// A Gate is the writer's gate, for tests.
type Gate struct{ g gate }

func (g *Gate) Enter(ctx context.Context, urgent bool) error { return g.g.enter(ctx, urgent) }
func (g *Gate) Leave()                                       { g.g.leave() }

// Waiting reports how many callers wait at the gate.
func (g *Gate) Waiting() int {
	g.g.mu.Lock()
	defer g.g.mu.Unlock()
	return len(g.g.urgent) + len(g.g.queued)
}

// HoldGate enters db's write gate until release is called, so tests can
// make writes queue at it; GateWaiting reports how many do.
func HoldGate(ctx context.Context, db *DB) (release func(), err error) {
	if err := db.gate.enter(ctx, false); err != nil {
		return nil, err
	}
	return db.gate.leave, nil
}

func GateWaiting(db *DB) int {
	db.gate.mu.Lock()
	defer db.gate.mu.Unlock()
	return len(db.gate.urgent) + len(db.gate.queued)
}

// SetRetryFor sets how long db's writes found busy are tried again.
func SetRetryFor(db *DB, d time.Duration) { db.retryFor = d }

// SetBusyTimeout sets the busy_timeout of the databases opened next, and
// returns a function that puts it back.
func SetBusyTimeout(d time.Duration) (restore func()) {
	old := busyTimeout
	busyTimeout = d
	return func() { busyTimeout = old }
}
