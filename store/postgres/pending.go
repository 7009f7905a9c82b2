package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mcpgram/mcpgram/store"
)

const pendingColumns = `id, chat_id, user_id, conversation_id, kind, payload,
	created_at, expires_at, resolved_at, resolution, resolved_by`

// CreatePending stores p as the chat's open interaction and returns its id.
// An earlier open interaction of the chat is resolved as
// store.ResolutionSuperseded in the same transaction, under the chat's
// lock, so that two processes creating one for the same chat at once both
// succeed, the later superseding the earlier. ID, ResolvedAt and
// Resolution are ignored; a zero CreatedAt means now.
func (db *DB) CreatePending(ctx context.Context, p store.Pending) (int64, error) {
	if p.Kind != store.KindQuestion && p.Kind != store.KindApproval {
		return 0, fmt.Errorf("create pending for chat %q: unknown kind %q", p.ChatID, p.Kind)
	}
	now := time.Now()
	created := p.CreatedAt
	if created.IsZero() {
		created = now
	}
	var conv *int64
	if p.ConversationID != 0 {
		conv = &p.ConversationID
	}
	var id int64
	// Idempotent in effect: run again after its commit was lost, it
	// creates the interaction again, superseding the first, and the id
	// returned is the one open.
	err := db.tx(ctx, idempotent, func(tx pgx.Tx) error {
		if err := lockChat(ctx, tx, p.ChatID, now); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE pending SET resolved_at = $1, resolution = $2
			WHERE chat_id = $3 AND resolved_at IS NULL`,
			millis(now), store.ResolutionSuperseded, p.ChatID); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `INSERT INTO pending
			(chat_id, user_id, conversation_id, kind, payload, created_at, expires_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
			p.ChatID, p.UserID, conv, p.Kind, text(p.Payload), millis(created), nullMillis(p.ExpiresAt)).Scan(&id)
	})
	if err != nil {
		return 0, fmt.Errorf("create pending %s for chat %q: %w", p.Kind, p.ChatID, err)
	}
	return id, nil
}

func scanPending(row pgx.CollectableRow) (store.Pending, error) {
	var p store.Pending
	var conv, expires, resolved *int64
	var resolution *string
	var created int64
	if err := row.Scan(&p.ID, &p.ChatID, &p.UserID, &conv, &p.Kind, &p.Payload,
		&created, &expires, &resolved, &resolution, &p.ResolvedBy); err != nil {
		return store.Pending{}, err
	}
	if conv != nil {
		p.ConversationID = *conv
	}
	p.CreatedAt = fromMillis(created)
	p.ExpiresAt = fromNullMillis(expires)
	p.ResolvedAt = fromNullMillis(resolved)
	if resolution != nil {
		p.Resolution = *resolution
	}
	return p, nil
}

// onePending runs a query for at most one interaction.
func (db *DB) onePending(ctx context.Context, query string, arg any) (store.Pending, error) {
	var p store.Pending
	err := db.do(ctx, reads, func(int) error {
		rows, err := db.pool.Query(ctx, query, arg)
		if err == nil {
			p, err = pgx.CollectExactlyOneRow(rows, scanPending)
		}
		return err
	})
	return p, notFound(err)
}

// OpenPending returns the chat's open interaction, or store.ErrNotFound.
// An open interaction past its ExpiresAt is still returned: expiry is
// decided by the caller, through [DB.ExpiredPending].
func (db *DB) OpenPending(ctx context.Context, chatID string) (store.Pending, error) {
	p, err := db.onePending(ctx, `SELECT `+pendingColumns+` FROM pending WHERE chat_id = $1 AND resolved_at IS NULL`, chatID)
	if err != nil {
		return store.Pending{}, fmt.Errorf("open pending of chat %q: %w", chatID, err)
	}
	return p, nil
}

// GetPending returns the interaction with the given id, open or not, or
// store.ErrNotFound.
func (db *DB) GetPending(ctx context.Context, id int64) (store.Pending, error) {
	p, err := db.onePending(ctx, `SELECT `+pendingColumns+` FROM pending WHERE id = $1`, id)
	if err != nil {
		return store.Pending{}, fmt.Errorf("get pending %d: %w", id, err)
	}
	return p, nil
}

// ResolvePending closes an open interaction with the given resolution. Of
// two concurrent calls, from any processes, one succeeds and the other
// gets store.ErrResolved: the second UPDATE waits for the first's row and
// finds it resolved. An unknown id gives store.ErrNotFound. by, the turn
// that resolves it, is kept as ResolvedBy.
func (db *DB) ResolvePending(ctx context.Context, id int64, resolution, by string) error {
	var resolved int
	var exists bool
	// Once: run again after it went in, it would find the interaction
	// resolved, and take its own press for someone else's.
	err := db.do(ctx, once, func(int) error {
		return db.pool.QueryRow(ctx, `WITH done AS (
				UPDATE pending SET resolved_at = $1, resolution = $2, resolved_by = $4
				WHERE id = $3 AND resolved_at IS NULL RETURNING 1)
			SELECT (SELECT count(*) FROM done), EXISTS (SELECT 1 FROM pending WHERE id = $3)`,
			millis(time.Now()), text(resolution), id, text(by)).Scan(&resolved, &exists)
	})
	switch {
	case err != nil:
	case resolved == 1:
		return nil
	case exists:
		err = store.ErrResolved
	default:
		err = store.ErrNotFound
	}
	return fmt.Errorf("resolve pending %d as %q: %w", id, resolution, err)
}

// ExpiredPending returns the open interactions whose ExpiresAt is at or
// before now, soonest expired first. It does not resolve them.
func (db *DB) ExpiredPending(ctx context.Context, now time.Time) ([]store.Pending, error) {
	ps, err := collect(ctx, db, `SELECT `+pendingColumns+` FROM pending
		WHERE resolved_at IS NULL AND expires_at IS NOT NULL AND expires_at <= $1
		ORDER BY expires_at, id`, []any{millis(now)}, scanPending)
	if err != nil {
		return nil, fmt.Errorf("list expired pending: %w", err)
	}
	if len(ps) == 0 {
		return nil, nil
	}
	return ps, nil
}
