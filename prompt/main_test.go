package prompt_test

import (
	"os"
	"testing"

	"github.com/mcpgram/mcpgram/hub/confine"
)

// TestMain lets this test binary start the MCP servers its tests run: each
// starts through it (see package confine).
func TestMain(m *testing.M) {
	confine.Main(os.Args)
	os.Exit(m.Run())
}
