package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/mcpgram/mcpgram/store/sqlite"
	"github.com/mcpgram/mcpgram/store/storetest"
)

// The behaviour both engines share, on a SQLite file of each test's own.
func TestStore(t *testing.T) {
	storetest.Run(t, storetest.PerTest(func(t testing.TB) string {
		return filepath.Join(t.TempDir(), "data", "mcpgram.db")
	}, sqlite.Open))
}

// The shared benchmarks, to set beside PostgreSQL's.
func BenchmarkStore(b *testing.B) {
	storetest.Bench(b, storetest.PerTest(func(t testing.TB) string {
		return filepath.Join(t.TempDir(), "data", "mcpgram.db")
	}, sqlite.Open))
}
