package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// appPage is the ui:// page the app tools name (MCP Apps, SEP-1865).
const appPage = "ui://features/app.html"

// appMIME is an MCP App page's MIME type.
const appMIME = "text/html;profile=mcp-app"

// appHTML is the features app: it speaks MCP Apps' side of the bridge by
// hand, shows the call's input and result, and calls app_refresh when its
// button is pressed.
const appHTML = `<!doctype html>
<html><body>
<h1 id="title">features app</h1>
<pre id="input"></pre><pre id="result"></pre>
<button id="refresh">Refresh</button><pre id="refreshed"></pre>
<button id="say">Say hello</button><pre id="said"></pre>
<script>
var next = 0, pending = {};
function ask(method, params) {
  return new Promise(function (ok, no) {
    var id = ++next; pending[id] = [ok, no];
    parent.postMessage({jsonrpc: "2.0", id: id, method: method, params: params}, "*");
  });
}
function show(id, text) { document.getElementById(id).textContent = text; }
window.addEventListener("message", function (ev) {
  var m = ev.data;
  if (!m || m.jsonrpc !== "2.0") return;
  if (m.id !== undefined && pending[m.id]) {
    var p = pending[m.id]; delete pending[m.id];
    if (m.error) p[1](m.error); else p[0](m.result);
    return;
  }
  if (m.method === "ui/notifications/tool-input") show("input", JSON.stringify(m.params.arguments));
  if (m.method === "ui/notifications/tool-result") show("result", m.params.content[0].text);
});
ask("ui/initialize", {appInfo: {name: "features", version: "1"}, appCapabilities: {}, protocolVersion: "2026-01-26"}).then(function (r) {
  document.body.dataset.theme = r.hostContext.theme;
  parent.postMessage({jsonrpc: "2.0", method: "ui/notifications/initialized", params: {}}, "*");
});
document.getElementById("refresh").onclick = function () {
  ask("tools/call", {name: "app_refresh", arguments: {}}).then(
    function (r) { show("refreshed", r.content[0].text); },
    function (e) { show("refreshed", "error: " + e.message); });
};
document.getElementById("say").onclick = function () {
  ask("ui/message", {role: "user", content: [{type: "text", text: "hello from the features app"}]}).then(
    function () { show("said", "sent"); },
    function (e) { show("said", "error: " + e.message); });
};
</script>
</body></html>
`

// refreshes counts the calls of app_refresh, which app_show reports: a
// test proves with it that the model's call of the app-only tool never
// reached the server.
var refreshes atomic.Int64

// addAppTools adds the tools of an MCP App: app_show, which the model and
// the app may call, and app_refresh, which only the app may. With
// metaTools (a JSON object of tool name to _meta), it adds a tool of each
// name, its _meta as given, however wrong: the hub's tests of what a
// hostile server may declare. pageUI and listedUI, JSON when not empty,
// are the _meta.ui of the app's page as read and as listed, however wrong
// too.
func addAppTools(s *server.MCPServer, metaTools, pageUI, listedUI string) error {
	withUI := func(t mcp.Tool, visibility ...any) mcp.Tool {
		t.Meta = &mcp.Meta{AdditionalFields: map[string]any{"ui": map[string]any{"resourceUri": appPage, "visibility": visibility}}}
		return t
	}
	s.AddTool(withUI(mcp.NewTool("app_show", mcp.WithDescription("Shows the features app, and says how often the app refreshed it.")), "model", "app"),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(fmt.Sprintf("app shown; refreshed %d times", refreshes.Load())), nil
		})
	s.AddTool(withUI(mcp.NewTool("app_refresh", mcp.WithDescription("Refreshes the features app's view: for the app alone.")), "app"),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(fmt.Sprintf("refreshed %d times", refreshes.Add(1))), nil
		})
	page, err := uiMeta(pageUI)
	if err != nil {
		return fmt.Errorf("-app-page-ui: %w", err)
	}
	listed, err := uiMeta(listedUI)
	if err != nil {
		return fmt.Errorf("-app-listed-ui: %w", err)
	}
	res := mcp.NewResource(appPage, "app.html", mcp.WithMIMEType(appMIME))
	if listed != nil {
		res.Meta = &mcp.Meta{AdditionalFields: listed}
	}
	s.AddResource(res, func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		return []mcp.ResourceContents{mcp.TextResourceContents{URI: appPage, MIMEType: appMIME, Text: appHTML, Meta: page}}, nil
	})
	if metaTools == "" {
		return nil
	}
	var metas map[string]map[string]any
	if err := json.Unmarshal([]byte(metaTools), &metas); err != nil {
		return fmt.Errorf("-meta-tools: %w", err)
	}
	names := make([]string, 0, len(metas))
	for name := range metas {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		t := mcp.NewTool(name, mcp.WithDescription("A tool whose _meta the test chose."))
		t.Meta = &mcp.Meta{AdditionalFields: metas[name]}
		s.AddTool(t, func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(name + " ran"), nil
		})
	}
	return nil
}

// uiMeta is a _meta holding raw as its "ui", or nil when raw is empty.
func uiMeta(raw string) (map[string]any, error) {
	if raw == "" {
		return nil, nil
	}
	var ui any
	if err := json.Unmarshal([]byte(raw), &ui); err != nil {
		return nil, err
	}
	return map[string]any{"ui": ui}, nil
}
