package mcpgram_test

import (
	"fmt"

	"github.com/mcpgram/mcpgram"
)

// A catalog is what the hub reports of its servers. The agent reads it to
// tell which calls run without a card, and which need the user's own
// consent on one.
func ExampleCatalog() {
	cat := mcpgram.Catalog{Servers: []mcpgram.ServerInfo{
		{Name: "calculator", Status: mcpgram.StatusRunning, AutoApprove: []string{"calculate"},
			Tools: []mcpgram.Tool{{Name: "calculate"}}},
		{Name: "memory", Status: mcpgram.StatusRunning,
			Tools: []mcpgram.Tool{{Name: "memory", ConsentWhen: map[string][]string{"operation": {"store"}}, PerUser: true}}},
	}}
	calc, _ := cat.Server("calculator")
	fmt.Println("calculate runs without asking:", calc.AutoApproves("calculate"))
	mem, _ := cat.Server("memory")
	tool, _ := mem.Tool("memory")
	fmt.Println("a search needs consent:", tool.NeedsConsent(map[string]any{"operation": "search"}))
	fmt.Println("a store needs consent:", tool.NeedsConsent(map[string]any{"operation": "store"}))
	fmt.Println("its results are the caller's alone:", mem.ActsPerUser("memory", ""))
	_, ok := cat.Server("weather")
	fmt.Println("weather is set up:", ok)
	// Output:
	// calculate runs without asking: true
	// a search needs consent: false
	// a store needs consent: true
	// its results are the caller's alone: true
	// weather is set up: false
}

// A result's text is every text part, a line each; images and files are
// apart.
func ExampleResult_Text() {
	r := &mcpgram.Result{Content: []mcpgram.Content{
		{Type: mcpgram.ContentText, Text: "2 + 2 = 4"},
		{Type: mcpgram.ContentImage, MIMEType: "image/png", Data: []byte{0x89, 'P', 'N', 'G'}},
		{Type: mcpgram.ContentText, Text: "(exact)"},
	}}
	fmt.Println(r.Text())
	fmt.Println(len(r.Images()), "image")
	// Output:
	// 2 + 2 = 4
	// (exact)
	// 1 image
}

// The sandbox a settings file asks for, read as the operator wrote it.
func ExampleParseSandboxMode() {
	for _, s := range []string{"auto", " Bubblewrap", "jail"} {
		if m, err := mcpgram.ParseSandboxMode(s); err != nil {
			fmt.Println("error:", err)
		} else {
			fmt.Println(m)
		}
	}
	// Output:
	// auto
	// bubblewrap
	// error: want auto, required, bubblewrap, landlock or off, got "jail"
}
