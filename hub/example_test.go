package hub_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/hub"
)

// A hub starts the servers of a settings file in the format Cline and
// Claude Desktop use, each in its sandbox, and routes calls to them. Here
// the bundled calculator, found on PATH as mcpgram's own settings name it.
func Example() {
	dir, err := os.MkdirTemp("", "mcpgram-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	settings := filepath.Join(dir, "mcp-settings.json")
	err = os.WriteFile(settings, []byte(`{"mcpServers": {
		"calculator": {"command": "mcp-calculator", "autoApprove": ["calculate"]},
		"weather": {"command": "mcp-weather", "disabled": true}
	}}`), 0o600)
	if err != nil {
		log.Fatal(err)
	}

	h, err := hub.New(settings, hub.Options{NoWatch: true})
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close()
	ctx := context.Background()
	if err := h.Start(ctx); err != nil {
		log.Fatal(err)
	}
	for _, s := range h.Catalog().Servers {
		fmt.Println(s.Name, s.Status)
	}
	caller := mcpgram.Caller{UserID: "42", ChatID: "42"}
	res, err := h.CallTool(ctx, caller, "calculator", "calculate", map[string]any{"expression": "25 * 48 + 120 / 4"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Text())
	_, err = h.CallTool(ctx, caller, "weather", "forecast", nil)
	fmt.Println(err)
	// Output:
	// calculator running
	// weather disabled
	// 1230
	// call tool "forecast" on "weather": server not running (disabled)
}
