package postgres_test

import (
	"testing"

	"github.com/mcpgram/mcpgram/store/postgres"
	"github.com/mcpgram/mcpgram/store/storetest"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// The behaviour both engines share, on a PostgreSQL database of each
// test's own.
func TestStore(t *testing.T) {
	t.Parallel()
	storetest.Run(t, storetest.PerTest(testenv.Postgres, postgres.Open))
}

// The shared benchmarks, to set beside SQLite's, on a database whose
// commits wait for the disk.
func BenchmarkStore(b *testing.B) {
	storetest.Bench(b, storetest.PerTest(testenv.PostgresDurable, postgres.Open))
}
