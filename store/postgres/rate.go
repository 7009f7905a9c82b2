package postgres

import (
	"context"
	"fmt"
	"time"
)

// The rates several instances share are kept with the generic cell rate
// algorithm: one row a key, holding the theoretical arrival time (tat) of
// the next event. An event at now, one every `every` with a burst of
// `burst`, moves tat to max(tat, now) + every, and fits while the new tat
// is at most now + burst*every. One statement reads and moves the row, so
// two instances taking from one key at once are serialised by its row
// lock, and the database's clock is the only one that counts.

// dbNowMicros is the database's clock in microseconds.
const dbNowMicros = `(extract(epoch from clock_timestamp()) * 1000000)::bigint`

// TakeRate counts one event of key against a limit of burst events, one
// more every `every`: it returns 0 when the event fits (and counts it),
// else how many events in a row the limit has refused, this one included
// (a refused event is not counted against the allowance).
func (db *DB) TakeRate(ctx context.Context, key string, every time.Duration, burst int) (int, error) {
	var refusals int
	err := db.do(ctx, noRetry, func(int) error {
		return db.pool.QueryRow(ctx, `WITH clock AS (SELECT `+dbNowMicros+` AS now)
		INSERT INTO rate_limits AS r (key, tat, refusals)
		SELECT $1, clock.now + $2, 0 FROM clock
		ON CONFLICT (key) DO UPDATE SET
			tat = CASE WHEN greatest(r.tat, (SELECT now FROM clock)) + $2 <= (SELECT now FROM clock) + $3
				THEN greatest(r.tat, (SELECT now FROM clock)) + $2 ELSE r.tat END,
			refusals = CASE WHEN greatest(r.tat, (SELECT now FROM clock)) + $2 <= (SELECT now FROM clock) + $3
				THEN 0 ELSE r.refusals + 1 END
		RETURNING refusals`,
			text(key), every.Microseconds(), int64(burst)*every.Microseconds()).Scan(&refusals)
	})
	if err != nil {
		return 0, fmt.Errorf("take from rate %q: %w", key, err)
	}
	return refusals, nil
}

// ReserveRate books one event of key at the rate of one every `every`,
// with a burst of burst, and returns how long the caller must wait before
// the event fits. The booking stands even if the caller gives up waiting.
func (db *DB) ReserveRate(ctx context.Context, key string, every time.Duration, burst int) (time.Duration, error) {
	var wait int64
	err := db.do(ctx, noRetry, func(int) error {
		return db.pool.QueryRow(ctx, `WITH clock AS (SELECT `+dbNowMicros+` AS now)
		INSERT INTO rate_limits AS r (key, tat, refusals)
		SELECT $1, clock.now + $2, 0 FROM clock
		ON CONFLICT (key) DO UPDATE SET tat = greatest(r.tat, (SELECT now FROM clock)) + $2
		RETURNING greatest(0, tat - (SELECT now FROM clock) - $3)`,
			text(key), every.Microseconds(), int64(burst)*every.Microseconds()).Scan(&wait)
	})
	if err != nil {
		return 0, fmt.Errorf("reserve from rate %q: %w", key, err)
	}
	return time.Duration(wait) * time.Microsecond, nil
}

// PruneRates deletes the rate rows that have been whole again since
// before: they say nothing an absent row would not.
func (db *DB) PruneRates(ctx context.Context, before time.Time) (int64, error) {
	tag, err := db.exec(ctx, idempotent, `DELETE FROM rate_limits WHERE tat < $1`, before.UnixMicro())
	if err != nil {
		return 0, fmt.Errorf("prune rates: %w", err)
	}
	return tag.RowsAffected(), nil
}
