package postgres_test

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/mcpgram/mcpgram/store/postgres"
	"github.com/mcpgram/mcpgram/store/storetest"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if err := testenv.StopPostgres(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}

// open opens a fresh database and closes it at the end of the test.
func open(t *testing.T) (*postgres.DB, string) {
	t.Helper()
	dsn := testenv.Postgres(t)
	db, err := postgres.Open(t.Context(), dsn)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db, dsn
}

func TestMigrationsNewDatabaseHasAllTables(t *testing.T) {
	t.Parallel()
	db := testenv.OpenPostgres(t, testenv.PostgresEmpty(t))
	for _, table := range []string{"chats", "conversations", "messages", "tool_calls", "pending", "inbox", "schema_migrations"} {
		n, err := postgres.QueryInt(t.Context(), db, `SELECT count(*) FROM information_schema.tables
			WHERE table_schema = current_schema() AND table_name = $1`, table)
		if err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Errorf("table %s: got %d, want 1", table, n)
		}
	}
}

func TestMigrations(t *testing.T) {
	t.Parallel()
	storetest.RunMigrations(t, func(t *testing.T) storetest.Migrator {
		dsn := testenv.PostgresEmpty(t)
		return storetest.Migrator{
			Open: func(ctx context.Context, fsys fs.FS) (io.Closer, error) {
				return postgres.OpenWithMigrations(ctx, dsn, fsys)
			},
			Int: func(ctx context.Context, db io.Closer, query string) (int64, error) {
				return postgres.QueryInt(ctx, db.(*postgres.DB), query)
			},
			Tables: `SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = 'c'`,
		}
	})
}

// Instances starting together on a new database migrate it once, one
// after the other, and all open.
func TestMigrationsConcurrentOpen(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dsn := testenv.PostgresEmpty(t)
	const n = 8
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			db, err := postgres.Open(ctx, dsn)
			if err == nil {
				err = db.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Open %d: %v", i, err)
		}
	}
	db, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	// Each migration was applied once: one row each, not one per Open.
	rows, err := postgres.QueryInt(ctx, db, `SELECT count(*) FROM schema_migrations`)
	if want := postgres.Migrations(t); err != nil || rows != want {
		t.Errorf("schema_migrations has %d rows, %v; want %d", rows, err, want)
	}
}

// An error opening a database never shows the DSN's password.
func TestOpenErrorHidesPassword(t *testing.T) {
	t.Parallel()
	for _, dsn := range []string{
		"postgres://mcpgram:s3cr3t-pw@127.0.0.1:1/mcpgram?sslmode=disable&connect_timeout=5",
		"host=127.0.0.1 port=1 user=mcpgram password=s3cr3t-pw dbname=mcpgram sslmode=disable",
		"postgres://mcpgram:s3cr3t-pw@127.0.0.1:1/mcpgram?sslmode=bogus",
	} {
		db, err := postgres.Open(t.Context(), dsn)
		if err == nil {
			_ = db.Close()
			t.Fatalf("Open(%q) with nothing listening: got nil error", dsn)
		}
		if strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("Open error shows the password: %v", err)
		}
	}
}

// TestMigrationCountsHistoryBytes upgrades a database written before
// migration 0014 and reads its history by bytes.
func TestMigrationCountsHistoryBytes(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db := upgrade(t, "0014", func(old *postgres.DB) error { return postgres.Exec(ctx, old, storetest.OldMessages) })
	storetest.CheckUpgradedHistory(ctx, t, db)
}

// upgrade makes a database of the migrations before version, has write
// write to it (as a version of that time did), and opens it as this
// version does, with every migration: the database as an upgrade leaves it.
func upgrade(t *testing.T, version string, write func(old *postgres.DB) error) *postgres.DB {
	t.Helper()
	ctx := t.Context()
	dsn := testenv.PostgresEmpty(t)
	old, err := postgres.OpenWithMigrations(ctx, dsn, storetest.Before(t, os.DirFS("migrations"), version))
	if err != nil {
		t.Fatal(err)
	}
	if err := write(old); err != nil {
		t.Fatal(err)
	}
	_ = old.Close()
	db, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}
