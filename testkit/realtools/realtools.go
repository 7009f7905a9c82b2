// Package realtools is test data: the tools of public MCP servers (a code
// host's, a file system's, browsers', chat and project tools', payments',
// maps' …), written out by us in tools.txt as those servers list them, so
// that tests and benchmarks can measure the prompt, the tool search and a
// turn against catalogs shaped like the real ones. The test server in
// ./server serves any of them over MCP.
package realtools

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpgram/mcpgram"
)

//go:embed tools.txt
var toolsText string

// A Server is one server of the file: its name, what it says it is for,
// and its tools in the order written. Source is the name it has in the
// file (Take names copies of it otherwise).
type Server struct {
	Name, About, Source string
	Tools               []Tool
}

// A Tool is one tool of a server.
type Tool struct {
	Name, Title, Description string
	// InputSchema is the tool's JSON Schema, compact, keys sorted.
	InputSchema json.RawMessage
}

// Servers returns every server of the file, in the order written.
func Servers() []Server {
	out, err := parse(toolsText)
	if err != nil {
		panic(err) // the embedded file is ours; its test reads it
	}
	return out
}

// Count returns how many tools the file holds.
func Count() int {
	n := 0
	for _, s := range Servers() {
		n += len(s.Tools)
	}
	return n
}

// Take returns servers holding n tools: the file's servers in order, the
// last one cut to fit. Past the file's tools it starts again with copies
// named "github-2", "filesystem-2" … (then -3 …), as when one server is
// connected several times, under other accounts.
func Take(n int) []Server {
	all := Servers()
	var out []Server
	for round := 1; n > 0; round++ {
		for _, s := range all {
			if n == 0 {
				break
			}
			if round > 1 {
				s.Name = fmt.Sprintf("%s-%d", s.Name, round)
			}
			s.Tools = s.Tools[:min(n, len(s.Tools))]
			n -= len(s.Tools)
			out = append(out, s)
		}
	}
	return out
}

// Catalog returns servers as a catalog of running servers, its tools
// sorted by name as the hub sorts them, with version 1.
func Catalog(servers []Server) mcpgram.Catalog {
	cat := mcpgram.Catalog{Version: 1}
	for _, s := range servers {
		info := mcpgram.ServerInfo{Name: s.Name, Status: mcpgram.StatusRunning, ExitCode: -1, Description: s.About}
		for _, t := range s.Tools {
			info.Tools = append(info.Tools, mcpgram.Tool{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: t.InputSchema})
		}
		slices.SortFunc(info.Tools, func(a, b mcpgram.Tool) int { return strings.Compare(a.Name, b.Name) })
		cat.Servers = append(cat.Servers, info)
	}
	slices.SortFunc(cat.Servers, func(a, b mcpgram.ServerInfo) int { return strings.Compare(a.Name, b.Name) })
	return cat
}

func parse(text string) ([]Server, error) {
	var out []Server
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		where := fmt.Sprintf("tools.txt:%d", i+1)
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "server "):
			name := strings.TrimPrefix(line, "server ")
			out = append(out, Server{Name: name, Source: name})
		case strings.HasPrefix(line, "about "):
			if len(out) == 0 {
				return nil, fmt.Errorf("%s: about before any server", where)
			}
			out[len(out)-1].About = strings.TrimPrefix(line, "about ")
		default:
			if len(out) == 0 {
				return nil, fmt.Errorf("%s: a tool before any server", where)
			}
			t, err := parseTool(line)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
			s := &out[len(out)-1]
			s.Tools = append(s.Tools, t)
		}
	}
	return out, nil
}

func parseTool(line string) (Tool, error) {
	f := strings.Split(line, "|")
	if len(f) != 4 {
		return Tool{}, fmt.Errorf("want name | title | description | arguments, got %d fields", len(f))
	}
	t := Tool{Name: strings.TrimSpace(f[0]), Title: strings.TrimSpace(f[1]), Description: strings.TrimSpace(f[2])}
	props := map[string]any{}
	var required []string
	for _, a := range strings.Split(f[3], ";") {
		a = strings.TrimSpace(a)
		if a == "" {
			continue
		}
		parts := strings.SplitN(a, " ", 3)
		if len(parts) < 2 {
			return Tool{}, fmt.Errorf("argument %q: want name type description", a)
		}
		name, req := strings.CutSuffix(parts[0], "*")
		if req {
			required = append(required, name)
		}
		p, err := property(parts[1])
		if err != nil {
			return Tool{}, fmt.Errorf("argument %q: %w", name, err)
		}
		if len(parts) == 3 {
			p["description"] = parts[2]
		}
		props[name] = p
	}
	schema := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		schema["required"] = required
	}
	b, err := json.Marshal(schema) // maps marshal with sorted keys
	if err != nil {
		return Tool{}, err
	}
	t.InputSchema = b
	return t, nil
}

func property(typ string) (map[string]any, error) {
	if values, ok := strings.CutPrefix(typ, "enum:"); ok {
		return map[string]any{"type": "string", "enum": strings.Split(values, "/")}, nil
	}
	if item, ok := strings.CutSuffix(typ, "[]"); ok {
		switch item {
		case "string", "integer", "object":
			return map[string]any{"type": "array", "items": map[string]any{"type": item}}, nil
		}
		return nil, fmt.Errorf("unknown array type %q", typ)
	}
	switch typ {
	case "string", "integer", "number", "boolean", "object":
		return map[string]any{"type": typ}, nil
	}
	return nil, fmt.Errorf("unknown type %q", typ)
}
