package prompt_test

import (
	"os"
	"testing"

	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// TestMain readies this test binary to start the MCP servers its tests run
// (testenv.Prepare).
func TestMain(m *testing.M) {
	testenv.Prepare()
	os.Exit(m.Run())
}
