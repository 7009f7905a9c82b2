package postgres

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mcpgram/mcpgram/store"
)

// InboxPut stores items in one transaction, skipping update ids already in
// the inbox (processed or not), so a batch Telegram sends again is
// harmless. It returns once the commit is durable.
//
// The rows go in in update id order: two batches that overlap, from two
// instances, then take their keys' locks in the same order, and one waits
// for the other instead of both waiting in a cycle (a deadlock PostgreSQL
// would end by failing one).
func (db *DB) InboxPut(ctx context.Context, items ...store.InboxItem) error {
	if len(items) == 0 {
		return nil
	}
	now := time.Now()
	sorted := slices.SortedStableFunc(slices.Values(items), func(a, b store.InboxItem) int {
		return cmp.Compare(a.UpdateID, b.UpdateID)
	})
	b := &pgx.Batch{}
	for _, it := range sorted {
		at := it.ReceivedAt
		if at.IsZero() {
			at = now
		}
		payload := it.Payload
		if payload == nil {
			payload = []byte{} // NOT NULL; a nil slice binds as NULL
		}
		b.Queue(`INSERT INTO inbox (update_id, chat_id, payload, received_at)
			VALUES ($1, $2, $3, $4) ON CONFLICT (update_id) DO NOTHING`,
			it.UpdateID, it.ChatID, payload, millis(at))
	}
	// Idempotent: an update stored already is skipped.
	if err := db.tx(ctx, idempotent, func(tx pgx.Tx) error { return tx.SendBatch(ctx, b).Close() }); err != nil {
		return fmt.Errorf("put %d updates in inbox: %w", len(items), err)
	}
	return nil
}

// InboxQueued returns up to limit queued items with an update
// id above afterID, in update_id order; limit <= 0 returns all.
func (db *DB) InboxQueued(ctx context.Context, afterID int64, limit int) ([]store.InboxItem, error) {
	items, err := db.inboxQueued(ctx, afterID, limit)
	if err != nil {
		return nil, fmt.Errorf("list queued updates after %d: %w", afterID, err)
	}
	return items, nil
}

// InboxQueuedChat returns up to limit queued items of one chat, in
// update_id order; limit <= 0 returns all.
func (db *DB) InboxQueuedChat(ctx context.Context, chatID string, limit int) ([]store.InboxItem, error) {
	items, err := collect(ctx, db, `SELECT update_id, chat_id, payload, received_at
		FROM inbox WHERE processed_at IS NULL AND chat_id = $1 ORDER BY update_id LIMIT $2`,
		[]any{chatID, limitArg(limit)}, scanInboxItem)
	if err != nil {
		return nil, fmt.Errorf("list queued updates of chat %q: %w", chatID, err)
	}
	if len(items) == 0 {
		return nil, nil
	}
	return items, nil
}

func (db *DB) inboxQueued(ctx context.Context, afterID int64, limit int) ([]store.InboxItem, error) {
	items, err := collect(ctx, db, `SELECT update_id, chat_id, payload, received_at
		FROM inbox WHERE processed_at IS NULL AND update_id > $1 ORDER BY update_id LIMIT $2`,
		[]any{afterID, limitArg(limit)}, scanInboxItem)
	if err != nil || len(items) == 0 {
		return nil, err
	}
	return items, nil
}

// scanInboxItem reads update_id, chat_id, payload and received_at.
func scanInboxItem(row pgx.CollectableRow) (store.InboxItem, error) {
	var it store.InboxItem
	var at int64
	err := row.Scan(&it.UpdateID, &it.ChatID, &it.Payload, &at)
	it.ReceivedAt = fromMillis(at)
	return it, err
}

// InboxDone marks updates as processed, and forgets their payloads, all
// in one statement. Marking one again is a no-op. Unknown update ids give an error wrapping
// store.ErrNotFound that names them; the known ones are marked all the
// same.
func (db *DB) InboxDone(ctx context.Context, updateIDs ...int64) error {
	if len(updateIDs) == 0 {
		return nil
	}
	// Idempotent: marking an update done again changes nothing.
	var known []int64
	err := db.do(ctx, idempotent, func(int) error {
		rows, err := db.pool.Query(ctx, `WITH done AS (
				UPDATE inbox SET processed_at = $1, payload = ''::bytea
				WHERE update_id = ANY ($2) AND processed_at IS NULL)
			SELECT update_id FROM inbox WHERE update_id = ANY ($2)`,
			millis(time.Now()), updateIDs)
		if err == nil {
			known, err = pgx.CollectRows(rows, pgx.RowTo[int64])
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("mark %s done: %w", store.DescribeUpdates(updateIDs), err)
	}
	var unknown []int64
	for _, id := range updateIDs {
		if !slices.Contains(known, id) {
			unknown = append(unknown, id)
		}
	}
	if len(unknown) > 0 {
		return fmt.Errorf("mark %s done: %w", store.DescribeUpdates(unknown), store.ErrNotFound)
	}
	return nil
}

// InboxMaxUpdateID returns the highest update id ever stored, processed or
// not, or 0 for an empty inbox.
func (db *DB) InboxMaxUpdateID(ctx context.Context) (int64, error) {
	var id int64
	if err := db.row(ctx, `SELECT coalesce(max(update_id), 0) FROM inbox`, nil, &id); err != nil {
		return 0, fmt.Errorf("max inbox update id: %w", err)
	}
	return id, nil
}

// InboxBacklog returns how many items are not yet processed, and when the
// oldest of them was received (zero when none are).
func (db *DB) InboxBacklog(ctx context.Context) (int, time.Time, error) {
	var n int
	var oldest *int64
	err := db.row(ctx, `SELECT count(*), min(received_at) FROM inbox WHERE processed_at IS NULL`, nil, &n, &oldest)
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("inbox backlog: %w", err)
	}
	return n, fromNullMillis(oldest), nil
}

// InboxPrune deletes processed items received before the given time and
// returns how many it deleted. The item with the highest update id is always
// kept, so that [DB.InboxMaxUpdateID] still knows where to resume. It also
// forgets the keys of turns' writes (see [DB.AppendTurn]) over an hour
// old (a write is retried for seconds), and what dead instances left of
// their leases and heartbeats.
func (db *DB) InboxPrune(ctx context.Context, before time.Time) (int64, error) {
	tag, err := db.exec(ctx, idempotent, `DELETE FROM inbox
		WHERE processed_at IS NOT NULL AND received_at < $1
		AND update_id < (SELECT max(update_id) FROM inbox)`, millis(before))
	if err == nil {
		_, err = db.exec(ctx, idempotent, `DELETE FROM turn_writes WHERE created_at < $1`, millis(time.Now().Add(-time.Hour)))
	}
	if err == nil {
		err = db.pruneLeases(ctx)
	}
	if err != nil {
		return 0, fmt.Errorf("prune inbox: %w", err)
	}
	return tag.RowsAffected(), nil
}
