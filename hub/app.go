package hub

import (
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcpgram/mcpgram"
)

// MetaUI is the key, in a tool definition's _meta, of its MCP Apps
// metadata (the extension io.modelcontextprotocol/ui, SEP-1865):
// {"resourceUri": "ui://…", "visibility": ["model", "app"]}. The hub
// reads it into mcpgram.Tool's App; mcpgram shows no app yet, but a tool
// whose visibility leaves out "model" never reaches the model.
const MetaUI = "ui"

// MetaUIResourceURI is the flat key of a tool's page that MCP Apps
// deprecated for MetaUI's resourceUri; hosts still read it where the
// nested one is absent, as the spec's SDK does.
const MetaUIResourceURI = "ui/resourceUri"

// The audiences MCP Apps' visibility names.
var audiences = map[string]mcpgram.Audience{"model": mcpgram.AudienceModel, "app": mcpgram.AudienceApp}

// toolApp reads the MCP Apps metadata of the tool named name from its
// _meta, noting what it ignores. A server's mistakes never cost it the
// tool, and what the hub keeps of them is bounded:
//   - its page, resourceUri (else the flat MetaUIResourceURI), is kept
//     when it is a ui:// URI of at most maxURI bytes on one printable
//     line; anything else is ignored;
//   - an absent or null visibility is the spec's default, both
//     audiences. A list hides the tool from each audience it does not
//     name; values other than "model" and "app" are ignored, so an empty
//     list, or one of unknown values alone, hides it from both, as the
//     spec reads ("Host MUST NOT include tools in the agent's tool list
//     when their visibility does not include 'model'"). A visibility that
//     is no list hides it from both too: a server that meant to narrow who
//     may call the tool is not read as opening it to everyone.
func toolApp(name string, meta *mcp.Meta) (mcpgram.ToolApp, []string) {
	var app mcpgram.ToolApp
	if meta == nil {
		return app, nil
	}
	var notes []string
	note := func(format string, args ...any) {
		notes = append(notes, fmt.Sprintf("tool %s: ", quoteShort(name))+fmt.Sprintf(format, args...))
	}
	var uri, visibility any
	switch ui := meta.AdditionalFields[MetaUI].(type) {
	case nil:
	case map[string]any:
		uri, visibility = ui["resourceUri"], ui["visibility"]
	default:
		note("ignored _meta.%s: %s, not an object", MetaUI, jsonKind(ui))
	}
	if uri == nil {
		uri = meta.AdditionalFields[MetaUIResourceURI]
	}
	if uri != nil {
		if why := pageProblem(uri); why != "" {
			note("ignored its app's page: %s", why)
		} else {
			app.ResourceURI = uri.(string)
		}
	}
	switch v := visibility.(type) {
	case nil:
	case []any:
		app.Hidden = mcpgram.AudienceModel | mcpgram.AudienceApp
		var unknown []string
		for _, e := range v {
			if a, ok := e.(string); ok && audiences[a] != 0 {
				app.Hidden &^= audiences[a]
				continue
			}
			if len(unknown) <= maxUnknown {
				unknown = append(unknown, shortValue(e))
			}
		}
		if len(unknown) > 0 {
			note("ignored visibility values other than \"model\" and \"app\": %s", listShort(unknown))
		}
	default:
		app.Hidden = mcpgram.AudienceModel | mcpgram.AudienceApp
		note("hidden from the model and apps: its visibility is %s, not a list", jsonKind(v))
	}
	return app, notes
}

// maxUnknown is how many unknown visibility values a note quotes.
const maxUnknown = 3

// pageProblem says why uri cannot name a tool's page, or "".
func pageProblem(uri any) string {
	s, ok := uri.(string)
	switch {
	case !ok:
		return fmt.Sprintf("its resourceUri is %s, not a string", jsonKind(uri))
	case len(s) > maxURI:
		return fmt.Sprintf("a URI of %d bytes (at most %d)", len(s), maxURI)
	case !strings.HasPrefix(s, "ui://") || len(s) == len("ui://"):
		return quoteShort(s) + " is not a ui:// URI"
	case !plainURI(s):
		return quoteShort(s) + " holds white space or characters that do not print"
	}
	return ""
}

// jsonKind names the JSON type of v, as decoded, for a note.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case float64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return "a value"
}

// shortValue quotes a string cut short, and names anything else's kind.
func shortValue(v any) string {
	if s, ok := v.(string); ok {
		return quoteShort(s)
	}
	return jsonKind(v)
}

// listShort joins the first maxUnknown of values, saying there are more.
func listShort(values []string) string {
	if len(values) > maxUnknown {
		return strings.Join(values[:maxUnknown], ", ") + " and more"
	}
	return strings.Join(values, ", ")
}
