package postgres_test

import (
	"testing"

	"github.com/mcpgram/mcpgram/internal/testenv"
	"github.com/mcpgram/mcpgram/store/postgres"
	"github.com/mcpgram/mcpgram/store/storetest"
)

// The behaviour both engines share, on a PostgreSQL database of each
// test's own.
func TestStore(t *testing.T) {
	storetest.Run(t, storetest.PerTest(func(t *testing.T) string { return testenv.Postgres(t) }, postgres.Open))
}
