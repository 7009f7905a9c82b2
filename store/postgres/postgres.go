// Package postgres keeps mcpgram's state in a PostgreSQL database, for
// several instances of the bot sharing one store. It implements the
// interfaces of package store ([store.Store]), whose doc is the contract,
// as store/sqlite does, so the agent, the bot and the dispatch queue take
// either; the suite of store/storetest runs against both. It also has what
// only a shared store has: [store.Leases], which divide the inbox's chats
// among the instances, and [store.Rates], limits they count together.
//
// It uses github.com/jackc/pgx/v5 through a pgxpool.Pool, whose
// connections cache the statements they run.
//
// Concurrency: statements run at READ COMMITTED, PostgreSQL's default,
// where each statement sees every commit made before it starts. The rules
// that span rows are enforced by the database, not by a process: unique
// partial indexes allow one active conversation and one open interaction
// per chat, and the writes that change either (starting or resetting a
// conversation, creating an interaction) first lock the chat's row (SELECT
// ... FOR NO KEY UPDATE), so that two of them for one chat, from any two
// processes, run one after the other and the second sees the first's
// result. Single-row transitions (resolving an interaction, marking an
// update done) are one conditional UPDATE each, which PostgreSQL makes
// atomic: of two concurrent ones, the second re-checks its condition on
// the committed row.
//
// Times are stored as UTC Unix milliseconds (bigint), as the SQLite store
// does, and returned as UTC time.Time values truncated to the millisecond.
//
// Lost connections: a call whose connection was lost (a restart, a
// failover: SQLSTATE class 08, 57P01 to 57P03, a reset or closed socket)
// runs again on a fresh connection, the pool reset, with backoff, for up
// to [DefaultRetryFor], where running it again cannot do a write twice;
// each method's effect says which it is (see retry.go). A turn's write is
// named by a key stored in its transaction (see [DB.AppendTurn]), so that
// even a commit whose answer was lost is not written twice. Past the
// retries a call fails with an error wrapping store.ErrUnavailable.
//
// Durability: a commit returns once PostgreSQL has flushed it
// (synchronous_commit on, the server's default), for the inbox and every
// other table alike.
//
// PostgreSQL's text cannot hold a NUL byte nor invalid UTF-8, which SQLite
// keeps as given: such bytes in a message's content, an audit row or a
// pending payload are stored as U+FFFD rather than failing the write.
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/store/internal/chatsettings"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

var (
	_ store.Store  = (*DB)(nil)
	_ store.Leases = (*DB)(nil)
	_ store.Rates  = (*DB)(nil)
)

// A DB is an open mcpgram database on a PostgreSQL server. It is safe for
// concurrent use, and by several processes at once.
type DB struct {
	pool *pgxpool.Pool
	name string // host:port/database, for errors; never the password
	// retryFor bounds the retries of a lost connection (see do).
	retryFor time.Duration

	chatSettings
}

// Open connects to the PostgreSQL database named by dsn (a postgres://
// URL or a key=value string, as libpq takes them) and applies the
// migrations it does not have yet. The database must exist.
func Open(ctx context.Context, dsn string) (*DB, error) {
	sub, err := fs.Sub(migrationFS, "migrations")
	if err != nil {
		return nil, fmt.Errorf("open PostgreSQL database: %w", err)
	}
	return open(ctx, dsn, sub)
}

// open is Open with the migrations taken from fsys, for tests.
func open(ctx context.Context, dsn string, fsys fs.FS) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		// pgx's error hides the password of the DSN it quotes.
		return nil, fmt.Errorf("open PostgreSQL database: %w", err)
	}
	db := &DB{name: fmt.Sprintf("%s:%d/%s", cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.Database), retryFor: DefaultRetryFor}
	db.chatSettings = chatsettings.New(db.chatSetting, db.setChatSetting)
	if db.pool, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
		return nil, fmt.Errorf("open PostgreSQL database %s: %w", db.name, err)
	}
	if err := db.migrate(ctx, fsys); err != nil {
		db.pool.Close()
		return nil, fmt.Errorf("open PostgreSQL database %s: %w", db.name, err)
	}
	return db, nil
}

// Ping reports whether the database answers a query.
func (db *DB) Ping(ctx context.Context) error {
	var one int
	// Not retried: a health check says how it is now.
	if err := db.do(ctx, noRetry, func(int) error { return db.pool.QueryRow(ctx, `SELECT 1`).Scan(&one) }); err != nil {
		return fmt.Errorf("database: %w", err)
	}
	return nil
}

// Name returns the server and database, as host:port/database.
func (db *DB) Name() string { return db.name }

// Close closes the connections, waiting for calls that hold one to finish
// first; later calls fail. Closing twice is harmless.
func (db *DB) Close() error {
	db.pool.Close()
	return nil
}

// millis converts t to what the database stores.
func millis(t time.Time) int64 { return t.UnixMilli() }

// fromMillis converts a stored time back to a UTC time.Time.
func fromMillis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// nullMillis stores the zero time as NULL.
func nullMillis(t time.Time) *int64 {
	if t.IsZero() {
		return nil
	}
	ms := t.UnixMilli()
	return &ms
}

// fromNullMillis returns the zero time for NULL.
func fromNullMillis(ms *int64) time.Time {
	if ms == nil {
		return time.Time{}
	}
	return fromMillis(*ms)
}

// text makes s storable in a text column: PostgreSQL refuses NUL bytes
// and invalid UTF-8, which become U+FFFD.
func text(s string) string {
	if utf8.ValidString(s) && !strings.ContainsRune(s, 0) {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// lockChat records the chat if it is new and locks its row until tx ends:
// the writes that change a chat's active conversation or open interaction
// take it first, so that they run one at a time per chat.
func lockChat(ctx context.Context, tx pgx.Tx, chatID string, now time.Time) error {
	if chatID == "" {
		return errors.New("empty chat id")
	}
	if _, err := tx.Exec(ctx, `INSERT INTO chats (id, created_at) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING`,
		chatID, millis(now)); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `SELECT 1 FROM chats WHERE id = $1 FOR NO KEY UPDATE`, chatID)
	return err
}

// notFound turns pgx's "no rows" into store.ErrNotFound.
func notFound(err error) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return store.ErrNotFound
	}
	return err
}
