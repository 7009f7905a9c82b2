package hub_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/hub"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// What an app's page declares of itself in _meta.ui, as its server lists
// it and as a read gives it, reaches the catalog and the read's content:
// the origins mcpgram.CheckAppOrigin accepts (in lower case, a trailing
// slash trimmed, each once), the permissions MCP Apps names, and whether
// it prefers a border. The rest,
// hostile or mistaken, is dropped, each a short note among the server's.
func TestAppPageDeclaration(t *testing.T) {
	page := map[string]any{
		"csp": map[string]any{
			"connectDomains": []any{"https://API.example.com/", "wss://live.example.com", "http://plain.example.com",
				"https://api.example.com", "https://x.example.com; script-src *", "'unsafe-eval'", "*", 7},
			"resourceDomains": []any{"https://*.cdn.example.com", "https://*.com", "wss://cdn.example.com", "https://cdn.example.com/lib.js",
				"https://a.example.com 'unsafe-inline'", "https://b.example.com:99999", `https://"q".example.com`, "data:", strings.Repeat("a", 300)},
			"frameDomains":   "https://frames.example.com",
			"baseUriDomains": []any{"https://base.example.com:8443"},
		},
		"permissions":   map[string]any{"clipboardWrite": map[string]any{}, "camera": map[string]any{}, "usb": map[string]any{}, "microphone": true},
		"prefersBorder": true,
	}
	listed := map[string]any{"csp": map[string]any{"connectDomains": []any{"https://listed.example.com"}}, "prefersBorder": "yes"}
	pageJSON, _ := json.Marshal(page)
	listedJSON, _ := json.Marshal(listed)
	entry := with(testenv.FeaturesEntry(t, false), map[string]any{"args": []string{"-app-page-ui", string(pageJSON), "-app-listed-ui", string(listedJSON)}})
	h, _ := startHub(t, map[string]any{"f": entry})
	const uri = "ui://features/app.html"

	s := server(t, h, "f")
	var listedPage *mcpgram.AppPage
	for _, r := range s.Resources {
		if r.URI == uri {
			listedPage = r.App
		}
	}
	if want := (&mcpgram.AppPage{ConnectDomains: []string{"https://listed.example.com"}}); !reflect.DeepEqual(listedPage, want) {
		t.Errorf("the listing's page declares %+v, want %+v", listedPage, want)
	}

	res, err := h.ReadResource(t.Context(), mcpgram.Caller{UserID: "1", ChatID: "1"}, "f", uri)
	if err != nil {
		t.Fatal(err)
	}
	want := &mcpgram.AppPage{
		ConnectDomains:  []string{"https://api.example.com", "wss://live.example.com"},
		ResourceDomains: []string{"https://*.cdn.example.com"},
		BaseURIDomains:  []string{"https://base.example.com:8443"},
		Permissions:     []string{"camera", "clipboardWrite"},
		PrefersBorder:   true,
	}
	if len(res.Content) != 1 || !reflect.DeepEqual(res.Content[0].App, want) {
		t.Fatalf("the read's page declares %+v, want %+v", res.Content[0].App, want)
	}
	notes := strings.Join(server(t, h, "f").Notes, "\n")
	for _, words := range []string{
		`"http://plain.example.com" of csp.connectDomains: not an https:// or wss:// origin`,
		`"https://x.example.com; script-src *" of csp.connectDomains`,
		`"'unsafe-eval'" of csp.connectDomains`,
		`"*" of csp.connectDomains`,
		"a value of csp.connectDomains: a number, not a string",
		`"https://*.com" of csp.resourceDomains: a wildcard of a top-level domain`,
		`"wss://cdn.example.com" of csp.resourceDomains: not an https:// origin`,
		`"https://cdn.example.com/lib.js" of csp.resourceDomains`,
		`"https://b.example.com:99999" of csp.resourceDomains: a port`,
		`"data:" of csp.resourceDomains`,
		"over 200 bytes",
		"ignored csp.frameDomains: a string, not a list",
		`permissions MCP Apps does not name: "usb"`,
		"ignored permission microphone: a boolean, not an object",
		"ignored its prefersBorder: a string, not true or false",
	} {
		if !strings.Contains(notes, `app page "`+uri+`": ignored `) || !strings.Contains(notes, words) {
			t.Errorf("no note says %q; notes:\n%s", words, notes)
		}
	}
	if _, err := h.ReadResource(t.Context(), mcpgram.Caller{UserID: "1", ChatID: "1"}, "f", uri); err != nil {
		t.Fatal(err)
	}
	if again := strings.Join(server(t, h, "f").Notes, "\n"); again != notes {
		t.Errorf("a second read changed the notes:\n%s\nwant:\n%s", again, notes)
	}
}

// Whatever a page's _meta.ui holds, what the hub keeps of it is bounded
// and plain: origins CheckAppOrigin accepts, at most 16 a list, each
// once; permissions MCP Apps names; notes on one short line each.
func FuzzAppPage(f *testing.F) {
	f.Add([]byte(`{"csp":{"connectDomains":["https://A.example.com/","wss://b.example.com","*","'unsafe-eval'"],"resourceDomains":["https://*.example.com; x"]},"permissions":{"camera":{},"usb":{}}}`))
	f.Add([]byte(`{"csp":{"frameDomains":"https://f.example.com","baseUriDomains":[7,null,{"a":1}]},"permissions":[]}`))
	f.Add([]byte(`{"csp":[],"permissions":{"microphone":true}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var ui any
		if json.Unmarshal(raw, &ui) != nil {
			return
		}
		page, notes := hub.AppPage("ui://s/p", ui)
		for _, n := range notes {
			if len(n) > 400 || strings.ContainsAny(n, "\r\n") {
				t.Errorf("note %q", n)
			}
		}
		if page == nil {
			return
		}
		for i, list := range [][]string{page.ConnectDomains, page.ResourceDomains, page.FrameDomains, page.BaseURIDomains} {
			if len(list) > mcpgram.MaxAppOrigins {
				t.Errorf("kept %d origins", len(list))
			}
			seen := map[string]bool{}
			for _, o := range list {
				if err := mcpgram.CheckAppOrigin(o, i == 0); err != nil || seen[o] {
					t.Errorf("kept %q (%v, twice: %v)", o, err, seen[o])
				}
				seen[o] = true
			}
		}
		for _, p := range page.Permissions {
			if _, ok := mcpgram.AppPermissions[p]; !ok {
				t.Errorf("kept permission %q", p)
			}
		}
	})
}
