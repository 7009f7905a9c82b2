package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/mcpgram/mcpgram/store"
)

// CreatePending stores p as the chat's open interaction and returns its id.
// An earlier open interaction of the chat is resolved as
// store.ResolutionSuperseded in the same transaction. ID, ResolvedAt and
// Resolution are ignored; a zero CreatedAt means now.
func (db *DB) CreatePending(ctx context.Context, p store.Pending) (int64, error) {
	if p.Kind != store.KindQuestion && p.Kind != store.KindApproval {
		return 0, fmt.Errorf("create pending for chat %q: unknown kind %q", p.ChatID, p.Kind)
	}
	now := db.now()
	created := p.CreatedAt
	if created.IsZero() {
		created = now
	}
	conv := sql.NullInt64{Int64: p.ConversationID, Valid: p.ConversationID != 0}
	var id int64
	err := db.write(ctx, func(tx *sql.Tx) error {
		if err := db.ensureChat(ctx, tx, p.ChatID, now); err != nil {
			return err
		}
		if _, err := db.txExec(ctx, tx, supersedePendingSQL,
			millis(now), store.ResolutionSuperseded, p.ChatID); err != nil {
			return err
		}
		res, err := db.txExec(ctx, tx, insertPendingSQL,
			p.ChatID, p.UserID, conv, p.Kind, p.Payload, millis(created), nullMillis(p.ExpiresAt))
		if err != nil {
			return err
		}
		id, err = res.LastInsertId()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("create pending %s for chat %q: %w", p.Kind, p.ChatID, err)
	}
	return id, nil
}

const (
	pendingColumns = `id, chat_id, user_id, conversation_id, kind, payload,
	created_at, expires_at, resolved_at, resolution, resolved_by`
	supersedePendingSQL = `UPDATE pending SET resolved_at = ?, resolution = ?
		WHERE chat_id = ? AND resolved_at IS NULL`
	insertPendingSQL = `INSERT INTO pending
		(chat_id, user_id, conversation_id, kind, payload, created_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`
	openPendingSQL = `SELECT ` + pendingColumns + `
		FROM pending WHERE chat_id = ? AND resolved_at IS NULL`
	getPendingSQL     = `SELECT ` + pendingColumns + ` FROM pending WHERE id = ?`
	resolvePendingSQL = `UPDATE pending SET resolved_at = ?, resolution = ?, resolved_by = ?
		WHERE id = ? AND resolved_at IS NULL`
	pendingExistsSQL = `SELECT 1 FROM pending WHERE id = ?`
)

type scanner interface{ Scan(dest ...any) error }

func scanPending(s scanner) (store.Pending, error) {
	var p store.Pending
	var conv, expires, resolved sql.NullInt64
	var resolution sql.NullString
	var created int64
	if err := s.Scan(&p.ID, &p.ChatID, &p.UserID, &conv, &p.Kind, &p.Payload,
		&created, &expires, &resolved, &resolution, &p.ResolvedBy); err != nil {
		return store.Pending{}, err
	}
	p.ConversationID = conv.Int64
	p.CreatedAt = fromMillis(created)
	p.ExpiresAt = fromNullMillis(expires)
	p.ResolvedAt = fromNullMillis(resolved)
	p.Resolution = resolution.String
	return p, nil
}

// OpenPending returns the chat's open interaction, or store.ErrNotFound. An open
// interaction past its ExpiresAt is still returned: expiry is decided by the
// caller, through [DB.ExpiredPending].
func (db *DB) OpenPending(ctx context.Context, chatID string) (store.Pending, error) {
	row := db.readRow(ctx, openPendingSQL, chatID)
	p, err := scanPending(row)
	if err != nil {
		return store.Pending{}, fmt.Errorf("open pending of chat %q: %w", chatID, notFound(err))
	}
	return p, nil
}

// GetPending returns the interaction with the given id, open or not, or
// store.ErrNotFound.
func (db *DB) GetPending(ctx context.Context, id int64) (store.Pending, error) {
	row := db.readRow(ctx, getPendingSQL, id)
	p, err := scanPending(row)
	if err != nil {
		return store.Pending{}, fmt.Errorf("get pending %d: %w", id, notFound(err))
	}
	return p, nil
}

// ResolvePending closes an open interaction with the given resolution (the
// caller's word, e.g. "answered", "approved", "denied", "expired"). It is
// atomic: of two concurrent calls, for example a button pressed twice, one
// succeeds and the other gets store.ErrResolved. An unknown id gives
// store.ErrNotFound. by, the turn that resolves it, is kept as ResolvedBy.
func (db *DB) ResolvePending(ctx context.Context, id int64, resolution, by string) error {
	err := db.write(ctx, func(tx *sql.Tx) error {
		res, err := db.txExec(ctx, tx, resolvePendingSQL, millis(db.now()), resolution, by, id)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil || n == 1 {
			return err
		}
		var one int
		err = db.txRow(ctx, tx, pendingExistsSQL, id).Scan(&one)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return store.ErrNotFound
		case err != nil:
			return err
		}
		return store.ErrResolved
	})
	if err != nil {
		return fmt.Errorf("resolve pending %d as %q: %w", id, resolution, err)
	}
	return nil
}

// ExpiredPending returns the open interactions whose ExpiresAt is at or
// before now, soonest expired first. It does not resolve them.
func (db *DB) ExpiredPending(ctx context.Context, now time.Time) ([]store.Pending, error) {
	rows, err := db.reader.QueryContext(ctx, `SELECT `+pendingColumns+` FROM pending
		WHERE resolved_at IS NULL AND expires_at IS NOT NULL AND expires_at <= ?
		ORDER BY expires_at, id`, millis(now))
	if err != nil {
		return nil, fmt.Errorf("list expired pending: %w", err)
	}
	defer func() { _ = rows.Close() }()
	var ps []store.Pending
	for rows.Next() {
		p, err := scanPending(rows)
		if err != nil {
			return nil, fmt.Errorf("list expired pending: %w", err)
		}
		ps = append(ps, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list expired pending: %w", err)
	}
	return ps, nil
}
