package hub

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcpgram/mcpgram"
)

// A snapshot is a server's catalog as last read: what the server says
// it is and what it offers. The hub publishes it, in ServerInfo; a
// connection fills it as it reads the server, and it is emptied when
// the server stops.
type snapshot struct {
	about     string // what the server says it is for (see ServerInfo.Description)
	title     string // its display name (see ServerInfo.Title)
	tools     []mcpgram.Tool
	resources []mcpgram.Resource
	templates []mcpgram.ResourceTemplate
	prompts   []mcpgram.Prompt
	completes bool     // the server offers completion/complete
	notes     []string // what Screen refused or cut of the catalog
	// synthetic: the catalog lists the connect tool of a per-user server
	// that no user has connected to yet, which needs no approval (it
	// asks the user itself).
	synthetic bool
}

// setLists takes the lists of l (what listCatalog reads) in place of
// those of c, keeping what the server said of itself.
func (c *snapshot) setLists(l snapshot) {
	c.tools, c.resources, c.templates, c.notes = l.tools, l.resources, l.templates, l.notes
	c.prompts, c.completes = l.prompts, l.completes
}

// readCatalog lists the tools, resources, resource templates and prompts
// of the server and publishes them.
func (s *server) readCatalog(ctx context.Context, c *conn) error {
	l, err := s.listCatalog(ctx, c)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.cat.setLists(l)
	s.mu.Unlock()
	s.outputs.reset()
	s.hub.changed()
	return nil
}

// listCatalog reads the lists of the catalog of the server of c, screened.
func (s *server) listCatalog(ctx context.Context, c *conn) (snapshot, error) {
	caps := c.client.GetServerCapabilities()
	var tools []mcpgram.Tool
	var metaNotes []string // what convertTool ignored of the tools' _meta
	if caps.Tools != nil {
		res, err := c.client.ListTools(ctx, mcp.ListToolsRequest{})
		if err != nil {
			return snapshot{}, fmt.Errorf("list tools: %w", err)
		}
		defs := make(map[string]mcp.Tool, len(res.Tools))
		for _, t := range res.Tools {
			tool, notes := convertTool(t)
			tools = append(tools, tool)
			metaNotes = append(metaNotes, notes...)
			defs[t.Name] = t
		}
		c.toolsMu.Lock()
		c.tools = defs
		c.toolsMu.Unlock()
		slices.SortFunc(tools, func(a, b mcpgram.Tool) int { return strings.Compare(a.Name, b.Name) })
	}
	var resources []mcpgram.Resource
	var templates []mcpgram.ResourceTemplate
	if caps.Resources != nil {
		// Resources are an extra: a server that fails to list them still
		// serves its tools.
		if res, err := c.client.ListResources(ctx, mcp.ListResourcesRequest{}); err != nil {
			s.log.Warn("list resources", "err", err)
		} else {
			for _, r := range res.Resources {
				listed := mcpgram.Resource{URI: r.URI, Name: r.Name, Description: r.Description, MIMEType: r.MIMEType}
				if r.Meta != nil {
					var notes []string
					listed.App, notes = appPage(r.URI, r.Meta.AdditionalFields[MetaUI])
					metaNotes = append(metaNotes, notes...)
				}
				resources = append(resources, listed)
			}
			slices.SortFunc(resources, func(a, b mcpgram.Resource) int { return strings.Compare(a.URI, b.URI) })
		}
		if res, err := c.client.ListResourceTemplates(ctx, mcp.ListResourceTemplatesRequest{}); err != nil {
			s.log.Debug("list resource templates", "err", err)
		} else {
			for _, r := range res.ResourceTemplates {
				t := mcpgram.ResourceTemplate{Name: r.Name, Description: r.Description, MIMEType: r.MIMEType}
				if r.URITemplate != nil && r.URITemplate.Template != nil {
					t.URITemplate = r.URITemplate.Raw()
				}
				templates = append(templates, t)
			}
			slices.SortFunc(templates, func(a, b mcpgram.ResourceTemplate) int { return strings.Compare(a.Name, b.Name) })
		}
	}
	if ctx.Err() != nil {
		return snapshot{}, ctx.Err()
	}
	tools, resources, templates, notes := Screen(tools, resources, templates)
	prompts, promptNotes := ScreenPrompts(s.listPrompts(ctx, c))
	for _, more := range [][]string{metaNotes, promptNotes} {
		if len(notes) < maxNotes {
			notes = capNotes(append(notes, more...))
		}
	}
	for _, n := range notes {
		s.log.Warn("screened the server's catalog", "note", n)
	}
	return snapshot{
		tools: tools, resources: resources, templates: templates, notes: notes,
		prompts: prompts, completes: caps.Completions != nil,
	}, nil
}

// convertTool is t as the domain holds it, and notes on what it ignored
// of t's _meta.
func convertTool(t mcp.Tool) (mcpgram.Tool, []string) {
	out := mcpgram.Tool{Name: t.Name, Title: t.Title, Description: t.Description}
	if out.Title == "" {
		out.Title = t.Annotations.Title
	}
	// Marshal the whole tool: mcp-go keeps a schema either typed or raw,
	// and its MarshalJSON knows which.
	if b, err := json.Marshal(t); err == nil {
		var v struct {
			InputSchema  json.RawMessage `json:"inputSchema"`
			OutputSchema json.RawMessage `json:"outputSchema"`
		}
		if json.Unmarshal(b, &v) == nil {
			out.InputSchema = compactJSON(v.InputSchema)
			out.OutputSchema = compactJSON(v.OutputSchema)
		}
	}
	if len(out.InputSchema) == 0 {
		out.InputSchema = json.RawMessage(`{"type":"object"}`)
	}
	a := t.Annotations
	out.Hints = mcpgram.Hints{ReadOnly: a.ReadOnlyHint, Destructive: a.DestructiveHint, Idempotent: a.IdempotentHint, OpenWorld: a.OpenWorldHint}
	if t.Meta != nil {
		if raw, ok := t.Meta.AdditionalFields[MetaConsentWhen]; ok {
			out.ConsentWhen = consentWhen(raw)
		}
		if raw, ok := t.Meta.AdditionalFields[MetaPerUser]; ok {
			out.PerUser = raw != false
		}
	}
	var notes []string
	out.App, notes = toolApp(t.Name, t.Meta)
	return out, notes
}

// compactJSON is raw without its white space; nil when raw is empty,
// null or not JSON.
func compactJSON(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var compact bytes.Buffer
	if json.Compact(&compact, raw) != nil {
		return nil
	}
	return json.RawMessage(compact.Bytes())
}

// consentWhen reads a tool's consent declaration. One that is malformed
// still declares that consent matters, so it is read as "every call": the
// safe side of a server's mistake.
func consentWhen(raw any) map[string][]string {
	out := map[string][]string{}
	m, ok := raw.(map[string]any)
	if !ok {
		return out
	}
	for name, v := range m {
		list, ok := v.([]any)
		if !ok {
			return map[string][]string{}
		}
		for _, e := range list {
			s, ok := e.(string)
			if !ok {
				return map[string][]string{}
			}
			out[name] = append(out[name], s)
		}
	}
	return out
}
