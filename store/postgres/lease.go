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
// A lease is renewed by its owner's heartbeat, one row per instance in
// instance_heartbeats, not by a write per chat: an instance holding a
// thousand chats renews them all with one write at every read of the
// inbox, so leases can be short and a dead instance's chats move in
// seconds. A lease lives while its owner's heartbeat does, or while the
// expires_at it was taken with is ahead (a lease of an instance that has
// not beaten yet). A database that restarted grants every heartbeat a
// whole lease from its start: nobody could beat while it was down, and
// nobody is taken for dead for that.
//
// Times are the database's clock (clock_timestamp), so that the instances'
// clocks need not agree.
//
// Deadlocks: the rows that already exist are locked with FOR UPDATE SKIP
// LOCKED (PostgreSQL's documented way for several consumers to share a
// queue): an instance passes over a lease another is releasing or taking
// rather than waiting for it. A heartbeat is written by its instance
// alone, and read without a lock by the others. The only waits left are
// on a new chat's row that two instances insert at once, and both insert
// in chat id order, so one waits for the other and neither for a cycle.
const (
	// clockSQL reads the database's clock and when the database started,
	// in milliseconds.
	clockSQL = `SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint,
		(extract(epoch FROM pg_postmaster_start_time()) * 1000)::bigint`

	// beatSQL renews the caller's heartbeat, and with it every lease of
	// the caller's.
	beatSQL = `INSERT INTO instance_heartbeats (name, expires_at, lease_ms) VALUES ($1, $2, $3)
		ON CONFLICT (name) DO UPDATE SET expires_at = EXCLUDED.expires_at, lease_ms = EXCLUDED.lease_ms`

	// releaseIdleSQL drops the caller's leases of chats with nothing
	// queued: their next update may go to any instance.
	releaseIdleSQL = `DELETE FROM chat_leases WHERE owner = $1 AND chat_id IN (
		SELECT l.chat_id FROM chat_leases l WHERE l.owner = $1 AND NOT EXISTS (
			SELECT 1 FROM inbox i WHERE i.chat_id = l.chat_id AND i.processed_at IS NULL)
		FOR UPDATE SKIP LOCKED)`

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

	// pruneHeartbeatsSQL forgets dead instances that hold no lease.
	pruneHeartbeatsSQL = `DELETE FROM instance_heartbeats h
		WHERE h.expires_at <= $1 AND $2 + h.lease_ms <= $1
		AND NOT EXISTS (SELECT 1 FROM chat_leases l WHERE l.owner = h.name)`

	claimedSQL = `SELECT i.update_id, i.chat_id, i.payload, i.received_at
		FROM inbox i JOIN chat_leases l ON l.chat_id = i.chat_id
		WHERE l.owner = $1 AND i.processed_at IS NULL AND i.update_id > $2
		ORDER BY i.update_id LIMIT $3`
)

var (
	// takeOverSQL takes expired leases of chats with queued updates,
	// whose owners no longer beat.
	takeOverSQL = `UPDATE chat_leases SET owner = $1, expires_at = $2 WHERE chat_id IN (
		SELECT l.chat_id FROM chat_leases l WHERE l.owner <> $1 AND l.expires_at <= $3
		AND NOT ` + ownerAlive("$3", "$5") + ` AND EXISTS (
			SELECT 1 FROM inbox i WHERE i.chat_id = l.chat_id AND i.processed_at IS NULL)
		LIMIT $4 FOR UPDATE SKIP LOCKED)`

	// pruneLeasesSQL drops the leases of chats with nothing queued whose
	// owners are dead: nobody else would, as each drops only its own.
	pruneLeasesSQL = `DELETE FROM chat_leases WHERE chat_id IN (
		SELECT l.chat_id FROM chat_leases l WHERE l.expires_at <= $1
		AND NOT ` + ownerAlive("$1", "$2") + ` AND NOT EXISTS (
			SELECT 1 FROM inbox i WHERE i.chat_id = l.chat_id AND i.processed_at IS NULL)
		FOR UPDATE SKIP LOCKED)`
)

// ownerAlive is the condition that the owner of lease l still beats, at
// the time now of a database started at started (placeholders).
func ownerAlive(now, started string) string {
	return `EXISTS (SELECT 1 FROM instance_heartbeats h WHERE h.name = l.owner
		AND (h.expires_at > ` + now + ` OR ` + started + ` + h.lease_ms > ` + now + `))`
}

// clock returns the database's time and the time it started, in
// milliseconds.
func clock(ctx context.Context, tx pgx.Tx) (now, started int64, err error) {
	err = tx.QueryRow(ctx, clockSQL).Scan(&now, &started)
	return now, started, err
}

// ClaimQueued renews the heartbeat of c.Instance, and with it every lease
// it holds, drops those of its chats with nothing queued, takes up to
// c.NewChats chats more (unleased ones, or ones whose owner no longer
// beats), and returns the queued items of every chat it then holds, in
// update id order, from c.After on, at most c.Limit (all when <= 0). All
// in one transaction, which writes one row however many chats are held,
// and more only for the chats it takes or drops.
func (db *DB) ClaimQueued(ctx context.Context, c store.Claim) ([]store.InboxItem, error) {
	if c.Instance == "" || c.LeaseFor <= 0 {
		return nil, fmt.Errorf("claim queued updates: an instance and a lease duration are required")
	}
	var items []store.InboxItem
	// Idempotent: beating and taking leases again leaves them as once.
	err := db.tx(ctx, idempotent, func(tx pgx.Tx) error {
		now, started, err := clock(ctx, tx)
		if err != nil {
			return err
		}
		until := now + c.LeaseFor.Milliseconds()
		if _, err := tx.Exec(ctx, beatSQL, c.Instance, until, c.LeaseFor.Milliseconds()); err != nil {
			return fmt.Errorf("renew heartbeat: %w", err)
		}
		if _, err := tx.Exec(ctx, releaseIdleSQL, c.Instance); err != nil {
			return fmt.Errorf("release idle leases: %w", err)
		}
		if c.NewChats > 0 {
			tag, err := tx.Exec(ctx, takeOverSQL, c.Instance, until, now, c.NewChats, started)
			if err != nil {
				return fmt.Errorf("take over the leases of dead instances: %w", err)
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

// ReleaseLeases drops every lease of instance, and its heartbeat, as it
// stops: its chats' queued updates go to the other instances at once
// rather than after the leases expire.
func (db *DB) ReleaseLeases(ctx context.Context, instance string) error {
	if _, err := db.exec(ctx, idempotent, `WITH gone AS (DELETE FROM instance_heartbeats WHERE name = $1)
		DELETE FROM chat_leases WHERE owner = $1`, instance); err != nil {
		return fmt.Errorf("release the leases of %s: %w", instance, err)
	}
	return nil
}

// pruneLeases forgets what dead instances left: the leases of their chats
// with nothing queued (those with queued updates are taken over), and
// then their heartbeats.
func (db *DB) pruneLeases(ctx context.Context) error {
	return db.tx(ctx, idempotent, func(tx pgx.Tx) error {
		now, started, err := clock(ctx, tx)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, pruneLeasesSQL, now, started); err != nil {
			return fmt.Errorf("prune the leases of dead instances: %w", err)
		}
		if _, err := tx.Exec(ctx, pruneHeartbeatsSQL, now, started); err != nil {
			return fmt.Errorf("prune the heartbeats of dead instances: %w", err)
		}
		return nil
	})
}

// LeaseOwner returns the instance holding chatID's lease and whether it is
// still live, or "" when nobody does: for tests and operators.
func (db *DB) LeaseOwner(ctx context.Context, chatID string) (owner string, live bool, err error) {
	err = db.row(ctx, `SELECT l.owner, l.expires_at > c.now OR `+ownerAlive("c.now", "c.started")+`
		FROM chat_leases l, (`+clockSQL+`) c(now, started) WHERE l.chat_id = $1`, []any{chatID}, &owner, &live)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("lease of chat %s: %w", chatID, err)
	}
	return owner, live, nil
}
