package hub_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/hub"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

const (
	model = mcpgram.AudienceModel
	app   = mcpgram.AudienceApp
)

// deep is a value nested n objects deep.
func deep(n int) any {
	var v any = "ui://s/deep"
	for range n {
		v = map[string]any{"a": v}
	}
	return v
}

// appMetas is the one table of what a server may declare of a tool for
// MCP Apps in its _meta, well or hostile, and what the hub keeps: the
// tool's page, who it is hidden from, and words of the note on what was
// ignored ("" for none). TestAppMetadata serves each from a real server;
// FuzzToolApp starts from them. Giant values are 16 KiB, eight times the
// bound: the table travels in one argument of the server's command line,
// which Linux caps at 128 KiB.
var appMetas = []struct {
	tool   string
	meta   map[string]any
	uri    string
	hidden mcpgram.Audience
	note   string
}{
	{"none", map[string]any{}, "", 0, ""},
	{"page", map[string]any{"ui": map[string]any{"resourceUri": "ui://s/page.html"}}, "ui://s/page.html", 0, ""},
	{"app_only", map[string]any{"ui": map[string]any{"resourceUri": "ui://s/p", "visibility": []any{"app"}}}, "ui://s/p", model, ""},
	{"model_only", map[string]any{"ui": map[string]any{"visibility": []any{"model"}}}, "", app, ""},
	{"both", map[string]any{"ui": map[string]any{"visibility": []any{"app", "model"}}}, "", 0, ""},
	{"no_one", map[string]any{"ui": map[string]any{"visibility": []any{}}}, "", model | app, ""},
	{"visibility_null", map[string]any{"ui": map[string]any{"visibility": nil}}, "", 0, ""},
	{"visibility_unknown", map[string]any{"ui": map[string]any{"visibility": []any{"model", "widget", 7, nil, []any{"app"}, "APP"}}}, "", app, `other than "model" and "app": "widget", a number, null and more`},
	{"visibility_unknown_only", map[string]any{"ui": map[string]any{"visibility": []any{"user"}}}, "", model | app, `"user"`},
	{"visibility_string", map[string]any{"ui": map[string]any{"visibility": "app"}}, "", model | app, "visibility is a string, not a list"},
	{"visibility_object", map[string]any{"ui": map[string]any{"visibility": map[string]any{"model": true}}}, "", model | app, "an object, not a list"},
	{"visibility_huge", map[string]any{"ui": map[string]any{"visibility": slices.Repeat([]any{"app"}, 5000)}}, "", model, ""},
	{"visibility_giant_value", map[string]any{"ui": map[string]any{"visibility": []any{"model", strings.Repeat("w", 1<<14)}}}, "", app, `"wwwwww`},
	{"uri_number", map[string]any{"ui": map[string]any{"resourceUri": 42}}, "", 0, "its resourceUri is a number, not a string"},
	{"uri_https", map[string]any{"ui": map[string]any{"resourceUri": "https://evil.example/app.html"}}, "", 0, `"https://evil.example/app.html" is not a ui:// URI`},
	{"uri_empty", map[string]any{"ui": map[string]any{"resourceUri": ""}}, "", 0, "is not a ui:// URI"},
	{"uri_bare", map[string]any{"ui": map[string]any{"resourceUri": "ui://"}}, "", 0, "is not a ui:// URI"},
	{"uri_upper", map[string]any{"ui": map[string]any{"resourceUri": "UI://s/p"}}, "", 0, "is not a ui:// URI"},
	{"uri_giant", map[string]any{"ui": map[string]any{"resourceUri": "ui://" + strings.Repeat("a", 1<<14)}}, "", 0, "a URI of 16389 bytes (at most 2048)"},
	{"uri_line_break", map[string]any{"ui": map[string]any{"resourceUri": "ui://s/p\n# forged"}}, "", 0, "white space or characters that do not print"},
	{"uri_deep", map[string]any{"ui": map[string]any{"resourceUri": deep(200)}}, "", 0, "an object, not a string"},
	{"ui_string", map[string]any{"ui": "ui://s/p"}, "", 0, "ignored _meta.ui: a string, not an object"},
	{"ui_list", map[string]any{"ui": []any{"app"}}, "", 0, "a list, not an object"},
	{"ui_null", map[string]any{"ui": nil}, "", 0, ""},
	{"legacy", map[string]any{"ui/resourceUri": "ui://s/legacy"}, "ui://s/legacy", 0, ""},
	{"legacy_beside_visibility", map[string]any{"ui": map[string]any{"visibility": []any{"app"}}, "ui/resourceUri": "ui://s/legacy"}, "ui://s/legacy", model, ""},
	{"nested_first", map[string]any{"ui": map[string]any{"resourceUri": "ui://s/new"}, "ui/resourceUri": "ui://s/old"}, "ui://s/new", 0, ""},
	{"legacy_bool", map[string]any{"ui/resourceUri": true}, "", 0, "a boolean, not a string"},
}

// What a server declares of its tools for MCP Apps, served by a real
// server, reaches the catalog as the table says, hostile declarations
// included: every tool stays, a page is kept only as a ui:// URI of
// bounded size, a visibility hides the tool from the audiences it leaves
// out, and each thing ignored is one short note. The hub itself calls an
// app-only tool like any other: who sees what is the caller's view of the
// catalog (mcpgram.Catalog.For).
func TestAppMetadata(t *testing.T) {
	metas := map[string]any{}
	for _, m := range appMetas {
		metas[m.tool] = m.meta
	}
	b, err := json.Marshal(metas)
	if err != nil {
		t.Fatal(err)
	}
	entry := with(testenv.FeaturesEntry(t, false), map[string]any{"args": []string{"-meta-tools", string(b)}})
	h, _ := startHub(t, map[string]any{"f": entry})
	s := server(t, h, "f")
	noteOf := func(tool string) []string {
		var out []string
		for _, n := range s.Notes {
			if strings.HasPrefix(n, "tool "+`"`+tool+`": `) {
				out = append(out, n)
			}
		}
		return out
	}
	for _, n := range s.Notes {
		if len(n) > 300 || strings.ContainsAny(n, "\n\r") {
			t.Errorf("a note of %d bytes: %.300q", len(n), n)
		}
	}
	for _, m := range appMetas {
		t.Run(m.tool, func(t *testing.T) {
			tool, ok := s.Tool(m.tool)
			if !ok {
				t.Fatalf("the catalog lacks the tool; notes %q", s.Notes)
			}
			if got, want := tool.App, (mcpgram.ToolApp{ResourceURI: m.uri, Hidden: m.hidden}); got != want {
				t.Errorf("App = %+v, want %+v", got, want)
			}
			notes := noteOf(m.tool)
			switch {
			case m.note == "" && len(notes) > 0:
				t.Errorf("notes %q, want none", notes)
			case m.note != "" && (len(notes) != 1 || !strings.Contains(notes[0], m.note)):
				t.Errorf("notes %q, want one saying %q", notes, m.note)
			}
		})
	}
	for name, want := range map[string]mcpgram.ToolApp{
		"app_show":    {ResourceURI: "ui://features/app.html"},
		"app_refresh": {ResourceURI: "ui://features/app.html", Hidden: model},
	} {
		if tool, _ := s.Tool(name); tool.App != want {
			t.Errorf("%s: App = %+v, want %+v", name, tool.App, want)
		}
	}
	if got := call(t, h, "f", "app_refresh", nil).Text(); got != "refreshed 1 times" {
		t.Errorf("app_refresh through the hub: %q", got)
	}
}

// Whatever a tool's _meta holds, what the hub keeps of it for MCP Apps is
// bounded and plain: a ui:// page of at most 2048 bytes on one line or
// none, the two audiences at most, and at most three short notes.
func FuzzToolApp(f *testing.F) {
	for _, m := range appMetas {
		if b, err := json.Marshal(m.meta); err == nil && len(b) < 4096 {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"ui":{"resourceUri":"ui://a\u202eb","visibility":["app",{"model":1}]}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var meta mcp.Meta
		if json.Unmarshal(raw, &meta) != nil {
			return
		}
		got, notes := hub.ToolApp("t", &meta)
		if u := got.ResourceURI; u != "" && (!strings.HasPrefix(u, "ui://") || len(u) > 2048 || !utf8.ValidString(u) || strings.ContainsAny(u, " \t\r\n")) {
			t.Errorf("kept the page %q", u)
		}
		if got.Hidden&^(model|app) != 0 {
			t.Errorf("hidden from %b", got.Hidden)
		}
		if len(notes) > 3 {
			t.Errorf("%d notes: %q", len(notes), notes)
		}
		for _, n := range notes {
			if len(n) > 400 || strings.ContainsAny(n, "\r\n") {
				t.Errorf("note %q", n)
			}
		}
	})
}

// appsExtension is MCP Apps' extension identifier.
const appsExtension = "io.modelcontextprotocol/ui"

// A hub that cannot show apps announces no MCP Apps extension to any
// server, even with every capability it has (an Elicitor): not in the
// initialize request to a 2025 server, read as it was sent, nor in the
// capabilities each 2026-07-28 request carries.
func TestProtocolNoAppsExtension(t *testing.T) {
	initialize, modern := appsCapabilities(t, false)
	for _, caps := range []map[string]any{initialize, modern} {
		if caps["elicitation"] == nil || caps["extensions"] != nil {
			t.Errorf("declared %v: want elicitation, and no extension", caps)
		}
	}
}

// A hub that can show apps (Options.Apps) announces the extension with
// the one MIME type it shows, in both revisions, beside elicitation.
func TestProtocolAppsExtension(t *testing.T) {
	initialize, modern := appsCapabilities(t, true)
	want := `{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}`
	for _, caps := range []map[string]any{initialize, modern} {
		got, _ := json.Marshal(caps["extensions"])
		if caps["elicitation"] == nil || string(got) != want {
			t.Errorf("declared %v: want elicitation, and extensions %s", caps, want)
		}
	}
}

// appsCapabilities starts a hub that can or cannot show apps with a 2025
// and a 2026-07-28 server, and returns the capabilities the first read in
// its initialize request, as sent, and those the second saw in a call.
func appsCapabilities(t *testing.T, apps bool) (initialize, modern map[string]any) {
	t.Helper()
	requests := filepath.Join(t.TempDir(), "requests.log")
	path := testenv.WriteSettings(t, t.TempDir(), map[string]any{
		"legacy": map[string]any{
			"command": testenv.TestServer(t, "raw"), "args": []string{"-mode", "weird"},
			"env": map[string]string{"RAW_REQUESTS": requests},
		},
		"modern": testenv.FeaturesEntry(t, false),
	})
	opts := fastOptions()
	opts.Apps = apps
	h := testenv.StartAsking(t, path, opts, hub.Askers{Elicitor: &scriptedElicitor{}})
	testenv.Running(t, h)
	b, err := os.ReadFile(requests)
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		var req struct {
			Method string `json:"method"`
			Params struct {
				Capabilities map[string]any `json:"capabilities"`
			} `json:"params"`
		}
		if err := json.Unmarshal([]byte(line), &req); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		if req.Method == "initialize" {
			initialize = req.Params.Capabilities
		} else if !apps && strings.Contains(line, appsExtension) {
			t.Errorf("%s request names %s: %s", req.Method, appsExtension, line)
		}
	}
	if initialize == nil {
		t.Fatalf("no initialize request in %s", b)
	}
	var got struct {
		Capabilities map[string]any `json:"capabilities"`
	}
	if err := json.Unmarshal([]byte(call(t, h, "modern", "client", nil).Text()), &got); err != nil {
		t.Fatal(err)
	}
	return initialize, got.Capabilities
}
