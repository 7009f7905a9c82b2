package servers_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram/bot/servers"
	"github.com/mcpgram/mcpgram/hub"
)

type catalog []hub.ServerInfo

func (c catalog) Catalog() hub.Catalog                         { return hub.Catalog{Servers: c} }
func (catalog) SetEnabled(context.Context, string, bool) error { return nil }
func (catalog) Restart(context.Context, string) error          { return nil }

// /servers says plainly which servers run outside a sandbox and why, and
// which files of the bot a server's sandbox cannot hide; a sandboxed
// server needs no word, nor does a remote one, and a server that may not
// start without its sandbox says so once, in its failure.
func TestViewSaysWhatIsNotSandboxed(t *testing.T) {
	reason := "this machine offers no sandbox (bubblewrap: <not installed>; Landlock: off)"
	required := "not started: its sandbox cannot be had: bubblewrap: not installed"
	sc := &servers.Screen{Hub: catalog{
		{Name: "boxed", Status: hub.StatusRunning, Sandbox: "bubblewrap"},
		{Name: "exposed", Status: hub.StatusRunning, Sandbox: "landlock", Exposed: []string{"/data/mcpgram.db"}},
		{Name: "open", Status: hub.StatusRunning, NotSandboxed: reason},
		{Name: "remote", Status: hub.StatusRunning},
		{Name: "strict", Status: hub.StatusFailed, Error: required, NotSandboxed: required},
	}}
	html, _ := sc.View(0)
	blocks := map[string]string{}
	for _, b := range strings.Split(html, "\n\n")[1:] {
		name := b[strings.Index(b, "<b>")+3 : strings.Index(b, "</b>")]
		blocks[name] = b
	}
	for name, want := range map[string]string{
		"exposed": "⚠️ <i>Its sandbox cannot hide</i> /data/mcpgram.db <i>from it.</i>",
		"open":    "⚠️ <i>Not sandboxed:</i> this machine offers no sandbox (bubblewrap: &lt;not installed&gt;; Landlock: off)",
		"strict":  "failed: " + required,
	} {
		if !strings.Contains(blocks[name], want) {
			t.Errorf("%s: %q lacks %q", name, blocks[name], want)
		}
	}
	for _, name := range []string{"boxed", "remote", "strict"} {
		if strings.Contains(blocks[name], "⚠️") {
			t.Errorf("%s: %q warns, want no word on its sandbox", name, blocks[name])
		}
	}
}
