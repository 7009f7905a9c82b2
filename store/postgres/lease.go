package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/mcpgram/mcpgram/store"
)

// The work of several instances sharing the inbox is divided by chat: a
// chat's queued updates belong to the instance holding its row in
// chat_leases, and nobody else runs them. A lease is the claim itself, so
// nothing is written per update: an instance that dies leaves its leases
// to expire, and whoever takes a chat then takes every update of it not
// yet marked done, the one its old owner was running included.
//
// Times are the database's clock (clock_timestamp), so that the instances'
// clocks need not agree.
//
// Deadlocks: the rows that already exist are locked with FOR UPDATE SKIP
// LOCKED (PostgreSQL's documented way for several consumers to share a
// queue): an instance passes over a lease another is renewing or taking
// rather than waiting for it. The only waits left are on a new chat's row
// that two instances insert at once, and both insert in chat id order, so
// one waits for the other and neither for a cycle.
const (
	nowSQL = `SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint`

	// renewSQL extends the caller's leases.
	renewSQL = `UPDATE chat_leases SET expires_at = $2 WHERE chat_id IN (
		SELECT chat_id FROM chat_leases WHERE owner = $1 FOR UPDATE SKIP LOCKED)`

	// releaseIdleSQL drops the caller's leases of chats with nothing
	// queued: their next update may go to any instance.
	releaseIdleSQL = `DELETE FROM chat_leases WHERE owner = $1 AND chat_id IN (
		SELECT l.chat_id FROM chat_leases l WHERE l.owner = $1 AND NOT EXISTS (
			SELECT 1 FROM inbox i WHERE i.chat_id = l.chat_id AND i.processed_at IS NULL)
		FOR UPDATE SKIP LOCKED)`

	// takeOverSQL takes expired leases of chats with queued updates,
	// oldest update first.
	takeOverSQL = `UPDATE chat_leases SET owner = $1, expires_at = $2 WHERE chat_id IN (
		SELECT l.chat_id FROM chat_leases l WHERE l.owner <> $1 AND l.expires_at <= $3 AND EXISTS (
			SELECT 1 FROM inbox i WHERE i.chat_id = l.chat_id AND i.processed_at IS NULL)
		LIMIT $4 FOR UPDATE SKIP LOCKED)`

	// takeNewSQL leases chats with queued updates and no lease, those
	// waiting longest first, inserted in chat id order.
	takeNewSQL = `INSERT INTO chat_leases (chat_id, owner, expires_at)
		SELECT chat_id, $1, $2 FROM (
			SELECT i.chat_id, min(i.update_id) AS first FROM inbox i
			WHERE i.processed_at IS NULL AND NOT EXISTS (
				SELECT 1 FROM chat_leases l WHERE l.chat_id = i.chat_id)
			GROUP BY i.chat_id ORDER BY first LIMIT $3) c
		ORDER BY chat_id
		ON CONFLICT (chat_id) DO NOTHING`

	claimedSQL = `SELECT i.update_id, i.chat_id, i.payload, i.received_at
		FROM inbox i JOIN chat_leases l ON l.chat_id = i.chat_id
		WHERE l.owner = $1 AND i.processed_at IS NULL AND i.update_id > $2
		ORDER BY i.update_id LIMIT $3`
)

// ClaimQueued renews the leases of c.Instance, drops those of its chats
// with nothing queued, takes up to c.NewChats chats more (unleased ones,
// or ones whose lease expired), and returns the queued items of every
// chat it then holds, in update id order, from c.After on, at most
// c.Limit (all when <= 0). All in one transaction.
func (db *DB) ClaimQueued(ctx context.Context, c store.Claim) ([]store.InboxItem, error) {
	if c.Instance == "" || c.LeaseFor <= 0 {
		return nil, fmt.Errorf("claim queued updates: an instance and a lease duration are required")
	}
	var items []store.InboxItem
	// Idempotent: renewing and taking leases again leaves them as once.
	err := db.tx(ctx, idempotent, func(tx pgx.Tx) error {
		var now int64
		if err := tx.QueryRow(ctx, nowSQL).Scan(&now); err != nil {
			return err
		}
		until := now + c.LeaseFor.Milliseconds()
		if _, err := tx.Exec(ctx, renewSQL, c.Instance, until); err != nil {
			return fmt.Errorf("renew leases: %w", err)
		}
		if _, err := tx.Exec(ctx, releaseIdleSQL, c.Instance); err != nil {
			return fmt.Errorf("release idle leases: %w", err)
		}
		if c.NewChats > 0 {
			tag, err := tx.Exec(ctx, takeOverSQL, c.Instance, until, now, c.NewChats)
			if err != nil {
				return fmt.Errorf("take over expired leases: %w", err)
			}
			if left := c.NewChats - int(tag.RowsAffected()); left > 0 {
				if _, err := tx.Exec(ctx, takeNewSQL, c.Instance, until, left); err != nil {
					return fmt.Errorf("take new chats: %w", err)
				}
			}
		}
		rows, err := tx.Query(ctx, claimedSQL, c.Instance, c.After, limitArg(c.Limit))
		if err != nil {
			return err
		}
		items, err = pgx.CollectRows(rows, scanInboxItem)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("claim queued updates for %s: %w", c.Instance, err)
	}
	return items, nil
}

// ReleaseLeases drops every lease of instance, as it stops: its chats'
// queued updates go to the other instances at once rather than after
// the leases expire.
func (db *DB) ReleaseLeases(ctx context.Context, instance string) error {
	if _, err := db.exec(ctx, idempotent, `DELETE FROM chat_leases WHERE owner = $1`, instance); err != nil {
		return fmt.Errorf("release the leases of %s: %w", instance, err)
	}
	return nil
}

// LeaseOwner returns the instance holding chatID's lease and whether it is
// still live, or "" when nobody does: for tests and operators.
func (db *DB) LeaseOwner(ctx context.Context, chatID string) (owner string, live bool, err error) {
	err = db.row(ctx, `SELECT owner, expires_at > (`+nowSQL+`) FROM chat_leases WHERE chat_id = $1`, []any{chatID}, &owner, &live)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("lease of chat %s: %w", chatID, err)
	}
	return owner, live, nil
}
