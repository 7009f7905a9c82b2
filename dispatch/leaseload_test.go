package dispatch_test

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mcpgram/mcpgram/dispatch"
	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// leaseLoadEnv runs TestLeaseWriteLoad, a measurement of minutes, over
// windows of the duration it holds (30s, say).
const leaseLoadEnv = "MCPGRAM_MEASURE_LEASES"

// The database's write load of one instance sharing the inbox, over a
// window, counted by PostgreSQL itself (pg_stat_statements, exact where
// the table statistics lag by seconds): rows inserted, updated and
// deleted, statements, and WAL bytes. With 1,000 chats held (each with a
// turn under way, waiting on its model, say: a chat holds a lease only
// while it has something queued) and with 1,000 chats idle (each served
// once, nothing queued), at the old default lease and a short one. A
// measurement, logged; it asserts nothing.
//
//	MCPGRAM_MEASURE_LEASES=30s go test -count=1 -run TestLeaseWriteLoad -v ./dispatch
func TestLeaseWriteLoad(t *testing.T) {
	env := os.Getenv(leaseLoadEnv)
	if env == "" {
		t.Skip("a measurement of minutes: " + leaseLoadEnv + "=30s runs it, over windows of 30 s")
	}
	window, err := time.ParseDuration(env)
	if err != nil {
		t.Fatalf("%s: %v", leaseLoadEnv, err)
	}
	for _, lease := range []time.Duration{30 * time.Second, 3 * time.Second} {
		for _, held := range []bool{true, false} {
			t.Run(fmt.Sprintf("lease=%s/held=%v", lease, held), func(t *testing.T) {
				measureLeaseWrites(t, lease, held, window)
			})
		}
	}
}

// countedCluster returns a database on a cluster of its own (its WAL is
// this test's alone) that counts statements, and a connection to it.
func countedCluster(t *testing.T) (dsn string, conn *pgx.Conn) {
	t.Helper()
	c := testenv.NewCluster(t)
	dsn = c.Database(t)
	connect := func() *pgx.Conn {
		conn, err := pgx.Connect(t.Context(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = conn.Close(context.Background()) })
		return conn
	}
	if _, err := connect().Exec(t.Context(), `ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'`); err != nil {
		t.Fatal(err)
	}
	c.Restart(t)
	conn = connect()
	if _, err := conn.Exec(t.Context(), `CREATE EXTENSION pg_stat_statements`); err != nil {
		t.Fatal(err)
	}
	return dsn, conn
}

// A tally is what the database did in a window.
type tally struct {
	written    float64 // rows inserted, updated or deleted
	statements float64
	wal        float64 // bytes, the whole cluster's
	by         []string
}

// count reads what the database did since began, at wal bytes of WAL.
func count(t *testing.T, conn *pgx.Conn, wal0 int64) tally {
	t.Helper()
	ctx := t.Context()
	var c tally
	rows, err := conn.Query(ctx, `SELECT query, calls, rows FROM pg_stat_statements
		WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
		AND query !~* 'pg_stat_statements|pg_wal_lsn_diff'`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var query string
		var calls, n int64
		if err := rows.Scan(&query, &calls, &n); err != nil {
			t.Fatal(err)
		}
		c.statements += float64(calls)
		verb := strings.ToUpper(strings.Fields(query)[0])
		if verb == "INSERT" || verb == "UPDATE" || verb == "DELETE" || verb == "WITH" {
			c.written += float64(n)
			if n > 0 {
				c.by = append(c.by, fmt.Sprintf("%d by %.40q", n, strings.Join(strings.Fields(query), " ")))
			}
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var wal int64
	if err := conn.QueryRow(ctx, `SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint`).Scan(&wal); err != nil {
		t.Fatal(err)
	}
	c.wal = float64(wal - wal0)
	sort.Strings(c.by)
	return c
}

// reset zeroes the statements' counts and returns the WAL position.
func reset(t *testing.T, conn *pgx.Conn) int64 {
	t.Helper()
	var wal int64
	if _, err := conn.Exec(t.Context(), `SELECT pg_stat_statements_reset()`); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(t.Context(), `SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint`).Scan(&wal); err != nil {
		t.Fatal(err)
	}
	return wal
}

func measureLeaseWrites(t *testing.T, lease time.Duration, held bool, window time.Duration) {
	const chats = 1000
	dsn, conn := countedCluster(t)
	db := testenv.OpenPostgres(t, dsn)
	release := make(chan struct{})
	var running, done atomic.Int64
	route := func(it store.InboxItem) dispatch.Job {
		return dispatch.Job{Lane: it.ChatID, Run: func(ctx context.Context) {
			running.Add(1)
			if held {
				select {
				case <-release:
				case <-ctx.Done():
				}
			}
			done.Add(1)
		}}
	}
	q := start(t, db, route, dispatch.Options{Leases: db, Instance: "i0", MaxRunning: chats + 8, LeaseFor: lease})
	defer func() { close(release); closeQueue(t, q) }()
	var items []store.InboxItem
	for c := range chats {
		items = append(items, store.InboxItem{UpdateID: int64(c + 1), ChatID: fmt.Sprint("c", c), Payload: []byte(`{}`)})
	}
	if err := db.InboxPut(t.Context(), items...); err != nil {
		t.Fatal(err)
	}
	q.Wake()
	leases := int64(0)
	if held {
		leases = chats
	}
	testenv.Eventually(t, 2*time.Minute, "the chats' jobs and leases", func() bool {
		var n int64
		err := conn.QueryRow(t.Context(), `SELECT count(*) FROM chat_leases`).Scan(&n)
		return err == nil && n == leases && running.Load() == chats && (held || done.Load() == chats)
	})

	wal := reset(t, conn)
	began := time.Now()
	time.Sleep(window) // the window measured, not a wait for a signal
	c := count(t, conn, wal)
	secs := time.Since(began).Seconds()
	t.Logf("lease %s, %d chats %s: %.1f rows written/s, %.1f statements/s, %.0f WAL bytes/s, over %.0f s; rows written: %s",
		lease, chats, map[bool]string{true: "held", false: "idle"}[held],
		c.written/secs, c.statements/secs, c.wal/secs, secs, strings.Join(c.by, "; "))
}
