package render_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpgram/mcpgram/bot/render"
	"github.com/mcpgram/mcpgram/internal/tgfake"
)

// FuzzApprovalCard: whatever the server, tool, resource and arguments,
// the card is HTML Telegram accepts in every part, shows the tool and
// server, shows nothing hidden, and an attachment holds the same JSON.
func FuzzApprovalCard(f *testing.F) {
	f.Add("files", "write_file", "", `{"path": "invoice\u202Efdp.exe", "content": "x"}`, false)
	f.Add("memory", "memory", "", `{"operation": "store", "content": "<b>&amp;"}`, true)
	f.Add("files", "", "file:///tmp/\u2066x", "", false)
	f.Add("s\u200B", "t\n<i>", "", `{"a\n• path": [1, {"b": null}], "c": "`+strings.Repeat("é", 5000)+`"}`, false)
	f.Add("s", "t", "", `not json \u202E`, false)
	f.Fuzz(func(t *testing.T, server, tool, uri, args string, consent bool) {
		c := render.ApprovalCard{Server: server, Tool: tool, URI: uri, Arguments: args, Consent: consent,
			Footer: "<i>Expires in 5 min if nobody answers.</i>", File: "arguments.json"}
		html, attach := c.HTML()
		var plain strings.Builder
		for _, part := range render.Split(html, render.MaxMessageLen) {
			p, err := tgfake.ParseHTML(part)
			if err != nil {
				t.Fatalf("Telegram would reject a part of the card: %v\n%q", err, part)
			}
			if n := tgfake.Len(p); n > render.MaxMessageLen {
				t.Fatalf("a part of the card is %d long", n)
			}
			plain.WriteString(p)
		}
		shown := plain.String()
		for _, r := range shown {
			if dangerous(r) {
				t.Fatalf("the card shows %U raw: %q", r, shown)
			}
		}
		squash := func(s string) string { return strings.Join(strings.Fields(s), "") }
		name := tool
		if tool == "" {
			name = uri
		}
		for _, want := range []string{name, server} {
			if v := squash(render.Visible(want)); !strings.Contains(squash(shown), v) {
				t.Fatalf("the card does not show %q as %q:\n%s", want, v, shown)
			}
		}
		if attach == nil {
			return
		}
		if !utf8.Valid(attach) || strings.ContainsFunc(string(attach), dangerous) {
			t.Fatalf("the attachment shows something hidden raw: %q", attach)
		}
		var want, got any
		if json.Unmarshal([]byte(args), &want) == nil {
			if err := json.Unmarshal(attach, &got); err != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("the attachment means %v (%v), the call %v", got, err, want)
			}
		}
	})
}

// A tool's title goes beside its name on an approval card, never in its
// place: a server chooses it.
func TestApprovalCardShowsTheTitleBesideTheName(t *testing.T) {
	html, _ := render.ApprovalCard{Server: "f", Tool: "delete_all", ToolTitle: "Read <safely>", Arguments: `{}`}.HTML()
	if !strings.Contains(html, "Run <code>delete_all</code> (Read &lt;safely&gt;) on <b>f</b>") {
		t.Errorf("card %q", html)
	}
}
