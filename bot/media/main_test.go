package media_test

import (
	"os"
	"testing"

	"github.com/mcpgram/mcpgram/bot/media"
)

// TestMain makes the test binary the PDF reader too, when the reader it
// starts (itself, as mcpgram starts itself) asks for it.
func TestMain(m *testing.M) {
	media.PDFMain(os.Args)
	os.Exit(m.Run())
}
