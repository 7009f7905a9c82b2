package storetest

import (
	"context"
	"io"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"
)

// A Migrator is what the migration contract (RunMigrations) needs of an
// engine: a fresh database to open with a set of migrations of the
// test's, and two questions it answers of it.
type Migrator struct {
	// Open opens the test's database, the same one each call, running
	// the migrations of fsys that it has not run yet.
	Open func(ctx context.Context, fsys fs.FS) (io.Closer, error)
	// Int answers query, which counts, of db.
	Int func(ctx context.Context, db io.Closer, query string) (int64, error)
	// Tables is a query that counts the tables named c.
	Tables string
}

// RunMigrations checks how an engine runs its migrations: each once, in
// order, a failing one rolled back whole (its table too) with the error
// naming it, a database newer than the binary refused, and a set of
// migrations whose names do not each give one version refused.
func RunMigrations(t *testing.T, m func(t *testing.T) Migrator) {
	t.Run("ReopenAppliesOnlyNew", func(t *testing.T) {
		t.Parallel()
		testReopenAppliesOnlyNew(t, m(t))
	})
	t.Run("BadNames", func(t *testing.T) {
		t.Parallel()
		for name, fsys := range map[string]fstest.MapFS{
			"no number":      {"init.sql": {Data: []byte(`SELECT 1;`)}},
			"zero":           {"0000_init.sql": {Data: []byte(`SELECT 1;`)}},
			"shared version": {"0001_a.sql": {Data: []byte(`SELECT 1;`)}, "1_b.sql": {Data: []byte(`SELECT 1;`)}},
			"none":           {},
		} {
			t.Run(name, func(t *testing.T) {
				db, err := m(t).Open(t.Context(), fsys)
				if err == nil {
					_ = db.Close()
					t.Fatal("Open: got nil error, want one")
				}
			})
		}
	})
}

func testReopenAppliesOnlyNew(t *testing.T, m Migrator) {
	ctx := t.Context()
	v1 := fstest.MapFS{
		"0001_a.sql": {Data: []byte(`CREATE TABLE a (x integer); INSERT INTO a VALUES (1);`)},
	}
	v2 := fstest.MapFS{
		"0001_a.sql": v1["0001_a.sql"],
		"0002_b.sql": {Data: []byte(`CREATE TABLE b (y integer); INSERT INTO a VALUES (2);`)},
		"README.md":  {Data: []byte(`not a migration`)},
	}
	broken := fstest.MapFS{
		"0001_a.sql":   v1["0001_a.sql"],
		"0002_b.sql":   v2["0002_b.sql"],
		"0003_bad.sql": {Data: []byte(`CREATE TABLE c (z integer); INSERT INTO a VALUES (3); SELECT nope FROM nowhere;`)},
	}
	steps := []struct {
		name        string
		fsys        fstest.MapFS
		wantErr     string // empty: Open succeeds
		wantVersion int64
		wantRows    int64 // rows in table a
	}{
		{"new database", v1, "", 1, 1},
		{"same migrations again", v1, "", 1, 1},
		{"one new migration", v2, "", 2, 2},
		{"failing migration rolls back", broken, "0003_bad.sql", 2, 2},
		{"binary older than database", v1, "newer", 2, 2},
		{"reopen after all that", v2, "", 2, 2},
	}
	for _, s := range steps {
		db, err := m.Open(ctx, s.fsys)
		if s.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), s.wantErr) {
				t.Fatalf("%s: Open error = %v, want one containing %q", s.name, err, s.wantErr)
			}
			// Look at what is there with the last good set.
			if db, err = m.Open(ctx, v2); err != nil {
				t.Fatalf("%s: reopen: %v", s.name, err)
			}
		} else if err != nil {
			t.Fatalf("%s: Open: %v", s.name, err)
		}
		version, err := m.Int(ctx, db, `SELECT max(version) FROM schema_migrations`)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := m.Int(ctx, db, `SELECT count(*) FROM a`)
		if err != nil {
			t.Fatal(err)
		}
		if version != s.wantVersion || rows != s.wantRows {
			t.Errorf("%s: version %d, rows in a %d; want %d, %d", s.name, version, rows, s.wantVersion, s.wantRows)
		}
		// The failed migration's table went with it: it ran in one
		// transaction.
		if c, err := m.Int(ctx, db, m.Tables); err != nil || c != 0 {
			t.Errorf("%s: table c of the failed migration: %d, %v; want none", s.name, c, err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
