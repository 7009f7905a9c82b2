package sqlite_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mcpgram/mcpgram/store/sqlite"
)

// TestSchemaIsTheMigrations shows that a new database, made at once from
// the schema the migrations give, has exactly the schema and the recorded
// migrations of one that every migration was applied to in turn, and that
// opening it again applies nothing.
func TestSchemaIsTheMigrations(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	migrated, err := sqlite.OpenWithMigrations(ctx, filepath.Join(dir, "migrated.db"), os.DirFS("migrations"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = migrated.Close() }()
	if sqlite.MadeFromSchema(migrated) {
		t.Fatal("OpenWithMigrations made the file from the schema, want each migration applied")
	}
	path := filepath.Join(dir, "made.db")
	made, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if !sqlite.MadeFromSchema(made) {
		t.Fatal("Open migrated a new file, want it made from the schema")
	}
	want, err := sqlite.Dump(ctx, migrated)
	if err != nil {
		t.Fatal(err)
	}
	got, err := sqlite.Dump(ctx, made)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("a new database's schema differs from the migrations':\ngot  %q\nwant %q", got, want)
	}
	for _, q := range []string{
		`SELECT count(*) FROM schema_migrations`,
		`SELECT max(version) FROM schema_migrations`,
		`SELECT sum(length(name) * version) FROM schema_migrations`,
	} {
		g, err := sqlite.QueryInt(ctx, made, q)
		if err != nil {
			t.Fatal(err)
		}
		w, err := sqlite.QueryInt(ctx, migrated, q)
		if err != nil {
			t.Fatal(err)
		}
		if g != w {
			t.Errorf("%s: got %d on a new database, want %d as migrated", q, g, w)
		}
	}
	again := reopen(t, made, path)
	if sqlite.MadeFromSchema(again) {
		t.Error("opening the file again made it anew")
	}
}
