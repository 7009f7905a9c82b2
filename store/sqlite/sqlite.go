// Package sqlite keeps mcpgram's state in one SQLite file, the default
// engine: it implements the interfaces of package store ([store.Store]),
// whose doc is the contract, for one process.
//
// It uses modernc.org/sqlite (no cgo). Pragmas are set in the DSN so that
// every pooled connection gets them, and all writes go through a single
// connection ([DB] holds a one-connection writer pool and a read-only reader
// pool), so writers queue in Go instead of fighting over SQLite's lock; they
// queue in arrival order, except [DB.InboxPut], which goes first.
// Transactions begin IMMEDIATE, which takes the write lock up front and
// avoids SQLITE_BUSY on lock upgrades; busy_timeout covers another process
// holding the file, and a write still found busy past it is tried again,
// with backoff, for up to [DefaultRetryFor] before it fails with
// store.ErrUnavailable (see busy.go).
//
// The schema is built by numbered migrations embedded in the binary
// (migrations/NNNN_name.sql), each applied in its own transaction and
// recorded in schema_migrations; reopening a database applies only new ones.
//
// Times are stored as UTC Unix milliseconds.
//
// The images users send are files beside the database, in a media folder
// named by the SHA-256 of their content, with a row each in the database
// ([DB.MediaPut]); messages name them by that hash.
//
// Durability: the database runs in WAL mode with synchronous=NORMAL, which is
// consistent after any crash and durable after a process crash, but may lose
// the last commits on power loss. Inbox writes ([DB.InboxPut],
// [DB.InboxDone]) are the exception and commit with synchronous=FULL, see
// [DB.InboxPut] for why; such a commit syncs the whole write-ahead log, so
// the commits before it are then safe too.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/store/internal/chatsettings"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

var _ store.Store = (*DB)(nil)

// A DB is an open mcpgram database. It is safe for concurrent use.
type DB struct {
	path string
	// writer has exactly one connection: every write is serialised on it,
	// entering through gate.
	writer *sql.DB
	gate   gate
	// reader is a pool of query_only connections for reads, which WAL lets
	// run alongside the writer.
	reader *sql.DB
	now    func() time.Time
	// retryFor bounds the retries of a write found busy (see whenFree).
	retryFor time.Duration

	// Prepared statements by their SQL, see readSQL and writeSQL.
	readStmts, writeStmts map[string]*sql.Stmt
	misses                atomic.Int64 // statements run unprepared, for tests
	madeFromSchema        bool         // a new file, made by create, for tests

	chatSettings
}

// dsn builds the connection string. The path is sent as a file: URI so that
// characters such as '?' or '#' in it are escaped rather than parsed.
func dsn(path string, readOnly bool) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "foreign_keys(1)")
	// What is deleted or overwritten is zeroed in its page, at no cost in
	// I/O, rather than left in the file: a sign-in's code, say.
	q.Add("_pragma", "secure_delete(fast)")
	if readOnly {
		q.Add("_pragma", "query_only(1)")
	}
	q.Set("_txlock", "immediate")
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(path), RawQuery: q.Encode()}
	return u.String()
}

// Open opens the database at path, creating the file and its folder if
// needed, and applies any migrations the file does not have yet.
func Open(ctx context.Context, path string) (*DB, error) {
	sub, err := fs.Sub(migrationFS, "migrations")
	if err != nil {
		return nil, fmt.Errorf("open database %q: %w", path, err)
	}
	return open(ctx, path, sub, true)
}

// open is Open with the migrations taken from fsys, and a new database made
// from the schema they give only when fromSchema, for tests.
func open(ctx context.Context, path string, fsys fs.FS, fromSchema bool) (*DB, error) {
	if path == "" || path == ":memory:" {
		return nil, fmt.Errorf("open database %q: a file path is required", path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open database %q: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o750); err != nil {
		return nil, fmt.Errorf("open database %q: %w", path, err)
	}
	db := &DB{path: abs, now: time.Now, retryFor: DefaultRetryFor}
	db.chatSettings = chatsettings.New(db.chatSetting, db.setChatSetting)

	if db.writer, err = sql.Open("sqlite", dsn(abs, false)); err != nil {
		return nil, fmt.Errorf("open database %q: %w", path, err)
	}
	db.writer.SetMaxOpenConns(1)
	db.writer.SetMaxIdleConns(1)
	// Keep the one connection for the life of the DB: reopening it costs the
	// DSN pragmas each time.
	db.writer.SetConnMaxLifetime(0)
	db.writer.SetConnMaxIdleTime(0)

	// Migrate before the readers exist so the file is created and switched
	// to WAL by the writer.
	if err := db.migrate(ctx, fsys, fromSchema); err != nil {
		_ = db.writer.Close()
		return nil, fmt.Errorf("open database %q: %w", path, err)
	}

	if db.reader, err = sql.Open("sqlite", dsn(abs, true)); err != nil {
		_ = db.writer.Close()
		return nil, fmt.Errorf("open database %q: %w", path, err)
	}
	n := max(4, runtime.GOMAXPROCS(0))
	db.reader.SetMaxOpenConns(n)
	db.reader.SetMaxIdleConns(n)
	if err := db.reader.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open database %q: %w", path, err)
	}
	if err := db.prepare(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open database %q: %w", path, err)
	}
	return db, nil
}

// Ping reports whether the database answers a query.
func (db *DB) Ping(ctx context.Context) error {
	var one int
	if err := db.reader.QueryRowContext(ctx, `SELECT 1`).Scan(&one); err != nil {
		return fmt.Errorf("database: %w", err)
	}
	return nil
}

// Path returns the absolute path of the database file.
func (db *DB) Path() string { return db.path }

// Close closes the database. Calls already running finish first; later
// calls fail.
func (db *DB) Close() error {
	errs := []error{db.closeStatements()}
	if db.reader != nil {
		errs = append(errs, db.reader.Close())
	}
	if db.writer != nil {
		errs = append(errs, db.writer.Close())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close database %q: %w", db.path, err)
	}
	return nil
}

// write runs fn in one IMMEDIATE transaction on the writer connection.
func (db *DB) write(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return db.whenFree(ctx, func() error {
		if err := db.gate.enter(ctx, false); err != nil {
			return err
		}
		defer db.gate.leave()
		tx, err := db.writer.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer func() { _ = tx.Rollback() }()
		if err := fn(tx); err != nil {
			return err
		}
		return tx.Commit()
	})
}

// millis converts t to what the database stores.
func millis(t time.Time) int64 { return t.UnixMilli() }

// fromMillis converts a stored time back to a UTC time.Time.
func fromMillis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// nullMillis stores the zero time as NULL.
func nullMillis(t time.Time) sql.NullInt64 {
	if t.IsZero() {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.UnixMilli(), Valid: true}
}

// fromNullMillis returns the zero time for NULL.
func fromNullMillis(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return fromMillis(v.Int64)
}

const ensureChatSQL = `INSERT INTO chats (id, created_at) VALUES (?, ?) ON CONFLICT (id) DO NOTHING`

// ensureChat records the chat if it is new; the chat row is what
// conversations and pending interactions hang off.
func (db *DB) ensureChat(ctx context.Context, tx *sql.Tx, chatID string, now time.Time) error {
	if chatID == "" {
		return errors.New("empty chat id")
	}
	_, err := db.txExec(ctx, tx, ensureChatSQL, chatID, millis(now))
	return err
}

// notFound is err, but store.ErrNotFound for a row that is not there.
func notFound(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return store.ErrNotFound
	}
	return err
}
