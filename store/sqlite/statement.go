package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/mcpgram/mcpgram/store/internal/chatsettings"
)

// Statements run for every turn or update are prepared once, at Open, on
// the pool that runs them: parsing the SQL is over half the cost of a small
// query in modernc's SQLite. database/sql prepares them again on any new
// connection of the pool, inside a transaction too. Other statements are
// parsed on each call.
var (
	readSQL = slices.Concat([]string{
		chatStateSQL, activeConversationSQL, messagesSQL, recentMessagesSQL, messagesSinceSQL, recentToolsSQL,
		openPendingSQL, getPendingSQL, openFormsSQL, getFormSQL,
		inboxQueuedSQL, userUsageSQL, dayUsageSQL,
	}, chatsettings.Reads)
	writeSQL = []string{
		activeConversationSQL, ensureChatSQL, insertConversationSQL, insertMessageSQL,
		insertToolCallSQL, addUsageSQL, insertTurnSQL,
		supersedePendingSQL, insertPendingSQL, resolvePendingSQL, pendingExistsSQL,
		insertInboxSQL, markInboxSQL, inboxExistsSQL,
		chatStateSQL, // read warm (see readWarm)
	}
)

// prepare prepares readSQL on the reader pool and writeSQL on the writer.
// The writer must be idle: preparing waits for its one connection. A
// statement that does not prepare (a schema without its table, as in the
// migration tests) is left to be parsed on each call, where it fails with
// its error in context; only the context's end fails prepare.
func (db *DB) prepare(ctx context.Context) error {
	db.readStmts = make(map[string]*sql.Stmt, len(readSQL))
	db.writeStmts = make(map[string]*sql.Stmt, len(writeSQL))
	for _, set := range []struct {
		pool  *sql.DB
		sql   []string
		stmts map[string]*sql.Stmt
	}{{db.reader, readSQL, db.readStmts}, {db.writer, writeSQL, db.writeStmts}} {
		for _, q := range set.sql {
			st, err := set.pool.PrepareContext(ctx, q)
			if err != nil {
				if ctx.Err() != nil {
					return fmt.Errorf("prepare statements: %w", err)
				}
				continue
			}
			set.stmts[q] = st
		}
	}
	return nil
}

// closeStatements closes what prepare prepared.
func (db *DB) closeStatements() error {
	var first error
	for _, m := range []map[string]*sql.Stmt{db.readStmts, db.writeStmts} {
		for _, st := range m {
			if err := st.Close(); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}

// unprepared counts a hot-path statement missing from readSQL or writeSQL;
// tests check that it stays at zero.
func (db *DB) unprepared() { db.misses.Add(1) }

// readRow runs a query returning one row on a reader connection.
func (db *DB) readRow(ctx context.Context, query string, args ...any) *sql.Row {
	if st := db.readStmts[query]; st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	db.unprepared()
	return db.reader.QueryRowContext(ctx, query, args...)
}

// readRows runs a query on a reader connection.
func (db *DB) readRows(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := db.readStmts[query]; st != nil {
		return st.QueryContext(ctx, args...)
	}
	db.unprepared()
	return db.reader.QueryContext(ctx, query, args...)
}

// readWarm runs a query of one row, read through scan, on the writer
// connection when no write holds it, else on a reader. The writer keeps
// the pages it cached across its own writes, while a reader drops all of
// its own whenever the database changed since its last read: what the
// last writes touched (a turn's chat, read again at the chat's next turn)
// is in the writer's memory, and a reader reads it from the files again,
// a system call a page. A read never waits for the writer.
func (db *DB) readWarm(ctx context.Context, query string, scan func(*sql.Row) error, args ...any) error {
	if st := db.writeStmts[query]; st != nil && db.gate.tryEnter() {
		defer db.gate.leave()
		return scan(st.QueryRowContext(ctx, args...))
	}
	return scan(db.readRow(ctx, query, args...))
}

// writeExec runs a statement on the writer outside any transaction.
func (db *DB) writeExec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	var res sql.Result
	err := db.whenFree(ctx, func() error {
		if err := db.gate.enter(ctx, false); err != nil {
			return err
		}
		defer db.gate.leave()
		var err error
		if st := db.writeStmts[query]; st != nil {
			res, err = st.ExecContext(ctx, args...)
			return err
		}
		db.unprepared()
		res, err = db.writer.ExecContext(ctx, query, args...)
		return err
	})
	return res, err
}

// txStmt returns query as a statement of tx, for running several times;
// tx closes it when it ends.
func (db *DB) txStmt(ctx context.Context, tx *sql.Tx, query string) (*sql.Stmt, error) {
	if st := db.writeStmts[query]; st != nil {
		return tx.StmtContext(ctx, st), nil
	}
	db.unprepared()
	return tx.PrepareContext(ctx, query)
}

// txExec runs a statement in tx.
func (db *DB) txExec(ctx context.Context, tx *sql.Tx, query string, args ...any) (sql.Result, error) {
	if st := db.writeStmts[query]; st != nil {
		return tx.StmtContext(ctx, st).ExecContext(ctx, args...)
	}
	db.unprepared()
	return tx.ExecContext(ctx, query, args...)
}

// txRow runs a query returning one row in tx.
func (db *DB) txRow(ctx context.Context, tx *sql.Tx, query string, args ...any) *sql.Row {
	if st := db.writeStmts[query]; st != nil {
		return tx.StmtContext(ctx, st).QueryRowContext(ctx, args...)
	}
	db.unprepared()
	return tx.QueryRowContext(ctx, query, args...)
}
