package servers_test

import (
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/bot/servers"
)

// /tools lists a server's every tool, and marks those the model is never
// shown: an MCP App's own ("app only"), and those whose visibility names
// no one ("hidden").
func TestChatViewMarksAppTools(t *testing.T) {
	cat := mcpgram.Catalog{Servers: []mcpgram.ServerInfo{{Name: "f", Status: mcpgram.StatusRunning, Tools: []mcpgram.Tool{
		{Name: "show", App: mcpgram.ToolApp{ResourceURI: "ui://f/app"}},
		{Name: "refresh", App: mcpgram.ToolApp{ResourceURI: "ui://f/app", Hidden: mcpgram.AudienceModel}},
		{Name: "nobody", App: mcpgram.ToolApp{Hidden: mcpgram.AudienceModel | mcpgram.AudienceApp}},
		{Name: "mine", App: mcpgram.ToolApp{Hidden: mcpgram.AudienceApp}},
	}}}}
	html, _ := servers.ChatView(cat, nil)
	p := plain(t, html)
	for _, want := range []string{"• show\n", "• refresh (app only)\n", "• nobody (hidden)\n", "• mine\n"} {
		if !strings.Contains(p+"\n", want) {
			t.Errorf("/tools lacks %q:\n%s", want, p)
		}
	}
}
