package testenv

import (
	"path/filepath"
	"testing"

	"github.com/mcpgram/mcpgram/store/sqlite"
)

// SQLite opens the SQLite database at path, or a new one in a folder of
// the test's own when path is "", and closes it when the test ends.
func SQLite(t testing.TB, path string) *sqlite.DB {
	t.Helper()
	if path == "" {
		path = filepath.Join(t.TempDir(), "mcpgram.db")
	}
	db, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatalf("open the database: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}
