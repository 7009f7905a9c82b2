package prompt_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/hub"
	"github.com/mcpgram/mcpgram/prompt"
	"github.com/mcpgram/mcpgram/testkit/testenv"
	"github.com/mcpgram/mcpgram/toolcall"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func catalog() mcpgram.Catalog {
	return mcpgram.Catalog{
		Version: 7,
		Servers: []mcpgram.ServerInfo{
			{Name: "broken", Status: mcpgram.StatusFailed, Error: "exit status 1", Tools: []mcpgram.Tool{{Name: "memory", InputSchema: json.RawMessage(`{"type":"object"}`)}}},
			{Name: "disabled", Status: mcpgram.StatusDisabled},
			{
				Name: "everything", Status: mcpgram.StatusRunning,
				Tools: []mcpgram.Tool{
					{Name: "get-sum", Description: "Returns the sum of two numbers", InputSchema: json.RawMessage(`{"type":"object","properties":{"b":{"type":"number","description":"Second number"},"a":{"type":"number","description":"First number"}},"required":["a","b"],"$schema":"http://json-schema.org/draft-07/schema#"}`)},
					{Name: "echo", Description: "Echoes back the input string", InputSchema: json.RawMessage(`{"type": "object", "properties": {"message": {"type": "string", "description": "Message to echo <as is>"}}, "required": ["message"]}`)},
				},
				Resources: []mcpgram.Resource{
					{URI: "demo://resource/static/document/b.md", Name: "b.md", MIMEType: "text/markdown", Description: "Second doc"},
					{URI: "demo://resource/static/document/a.md", Name: "a.md", MIMEType: "text/markdown", Description: "First doc\nspanning two lines"},
				},
				ResourceTemplates: []mcpgram.ResourceTemplate{
					{URITemplate: "demo://resource/dynamic/text/{resourceId}", Name: "Dynamic Text Resource", MIMEType: "text/plain", Description: "Plaintext dynamic resource fabricated on the fly"},
				},
			},
			{Name: "empty", Status: mcpgram.StatusRunning},
		},
	}
}

func withMemory() mcpgram.Catalog {
	cat := catalog()
	cat.Servers = append(cat.Servers, mcpgram.ServerInfo{
		Name: "memory", Status: mcpgram.StatusRunning,
		Tools: []mcpgram.Tool{{Name: "memory", Description: "Stores facts about the user", InputSchema: json.RawMessage(`{"type":"object","properties":{"fact":{"type":"string"},"has_explicit_permission":{"type":"boolean"}},"required":["fact","has_explicit_permission"]}`)}},
	})
	return cat
}

// shapes is a server whose tools have the schema shapes real servers
// send: each line of the terse form, and what falls back to JSON Schema.
func shapes() mcpgram.Catalog {
	tool := func(name, schema string) mcpgram.Tool {
		return mcpgram.Tool{Name: name, Description: "Shape " + name + ".", InputSchema: json.RawMessage(schema)}
	}
	return mcpgram.Catalog{Servers: []mcpgram.ServerInfo{{
		Name: "shapes", Status: mcpgram.StatusRunning,
		Tools: []mcpgram.Tool{
			tool("none", `{"type":"object","properties":{},"required":[],"$schema":"http://json-schema.org/draft-07/schema#"}`),
			tool("keywords", `{"type":"object","properties":{"mode":{"type":"string","enum":["fast","safe"],"default":"safe","description":"How to run.\nSecond line."},"count":{"type":"integer","minimum":1,"maximum":10,"default":3},"url":{"type":"string","format":"uri","title":"URL"},"dry":{"type":"boolean","default":null}},"required":["mode"],"additionalProperties":false}`),
			tool("nested", `{"type":"object","properties":{"edits":{"type":"array","minItems":1,"items":{"type":"object","properties":{"old":{"type":"string","description":"Text to find"},"new":{"type":"string"}},"required":["old","new"],"additionalProperties":false}},"options":{"type":"object","properties":{"depth":{"type":"integer"}}},"tags":{"type":"array","maxItems":20,"items":{"type":"string","maxLength":50}},"matrix":{"type":"array","items":{"type":"array","items":{"type":"number"}}},"odd key":{"type":"string"}},"required":["edits"]}`),
			tool("pydantic", `{"properties":{"path":{"title":"Path","type":"string"},"max_results":{"anyOf":[{"type":"integer"},{"type":"null"}],"default":null,"title":"Max Results"},"kind":{"type":["string","null"]}},"required":["path"],"title":"pydanticArguments","type":"object"}`),
			tool("union", `{"type":"object","properties":{"target":{"oneOf":[{"type":"string"},{"type":"object","properties":{"id":{"type":"number"}},"additionalProperties":false}]}},"required":["target"],"additionalProperties":false}`),
			tool("ref", `{"$defs":{"Point":{"title":"Point","type":"object","properties":{"x":{"type":"number","title":"X"}}}},"type":"object","properties":{"at":{"$ref":"#/$defs/Point"}}}`),
			tool("titled", `{"type":"object","properties":{"q":{"type":"string","title":"Where to look"}}}`),
		},
	}}}
}

// TestGolden: the XML prompt (BuildWith) and what a native call sends
// (see native) of the same catalogs.
func TestGolden(t *testing.T) {
	tests := []struct {
		name  string
		build func(mcpgram.Catalog, prompt.Options) string
		cat   mcpgram.Catalog
		opts  prompt.Options
	}{
		{"no_servers", prompt.BuildWith, mcpgram.Catalog{}, prompt.Options{}},
		{"servers", prompt.BuildWith, catalog(), prompt.Options{}},
		{"memory_and_instructions", prompt.BuildWith, withMemory(), prompt.Options{Instructions: "  Answer like a pirate.\n"}},
		{"schemas", prompt.BuildWith, shapes(), prompt.Options{}},
		{"native_no_servers", native, mcpgram.Catalog{}, prompt.Options{}},
		{"native_servers", native, catalog(), prompt.Options{}},
		{"native_memory_and_instructions", native, withMemory(), prompt.Options{Instructions: "Answer like a pirate."}},
		{"native_schemas", native, shapes(), prompt.Options{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			golden(t, tc.name, tc.build(tc.cat, tc.opts))
		})
	}
}

func TestBuildIsPlainBuildWith(t *testing.T) {
	if prompt.Build(catalog()) != prompt.BuildWith(catalog(), prompt.Options{}) {
		t.Error("Build differs from BuildWith with no options")
	}
}

// TestStable: the catalog's order, version, and the state and tools of
// the servers that are not running do not change a byte.
func TestStable(t *testing.T) {
	want := prompt.Build(catalog())
	cat := catalog()
	cat.Version = 99
	slices.Reverse(cat.Servers)
	for i := range cat.Servers {
		slices.Reverse(cat.Servers[i].Tools)
		slices.Reverse(cat.Servers[i].Resources)
	}
	if got := prompt.Build(cat); got != want {
		t.Error("prompt changed with catalog order or version")
	}
	for _, st := range []mcpgram.Status{mcpgram.StatusStarting, mcpgram.StatusRestarting} {
		for i := range cat.Servers {
			if cat.Servers[i].Name == "broken" {
				cat.Servers[i].Status, cat.Servers[i].Error = st, ""
			}
		}
		if got := prompt.Build(cat); got != want {
			t.Errorf("prompt changed as a server not running went from failed to %s", st)
		}
	}
	if again := prompt.Build(catalog()); again != want {
		t.Error("prompt changed between calls")
	}
}

func TestContents(t *testing.T) {
	got := prompt.Build(catalog())
	holds(t, "prompt", got,
		"## everything\n",
		"- echo: Echoes back the input string\n    Arguments:\n    - message (string, required): Message to echo <as is>\n",
		"    Arguments:\n    - a (number, required): First number\n    - b (number, required): Second number\n",
		"- demo://resource/static/document/a.md (a.md, text/markdown): First doc\n    spanning two lines\n",
		"- demo://resource/dynamic/text/{resourceId} (Dynamic Text Resource, text/plain): Plaintext dynamic resource fabricated on the fly\n",
		"## empty\n\n(This server offers no tools or resources.)\n",
		// A server set up but down is named, for the model to say so.
		"\nThese servers are set up but not available right now, so their tools are not listed: broken. If a request needs one of them, say that it is unavailable at the moment.\n",
	)
	holdsNone(t, "prompt", got, "## broken", "disabled", "$schema", "# Memory")
	if strings.Index(got, "- echo") > strings.Index(got, "- get-sum") {
		t.Error("tools are not sorted by name")
	}
}

func TestMemoryReminder(t *testing.T) {
	got := prompt.Build(withMemory())
	if !strings.Contains(got, "# Memory\n") || !strings.Contains(got, "sees each store on a card") || !strings.Contains(got, "do not ask first") {
		t.Errorf("memory reminder missing:\n%s", got)
	}
}

// TestExamplesParse: every tool call printed in the prompt parses with the
// toolcall parser into a complete block with its required parameters,
// and the prompt's own text never opens a block by accident.
func TestExamplesParse(t *testing.T) {
	for name, cat := range map[string]mcpgram.Catalog{"none": {}, "servers": catalog(), "memory": withMemory(), "shapes": shapes()} {
		t.Run(name, func(t *testing.T) {
			p := prompt.Build(cat)
			r := toolcall.Parse(p)
			var names []string
			for _, b := range r.Blocks {
				names = append(names, b.Name)
				if !b.Complete {
					t.Errorf("example %s is cut off:\n%s", b.Name, b.Raw)
				}
				for _, param := range map[string][]string{
					toolcall.UseMCPTool:          {"server_name", "tool_name", "arguments"},
					toolcall.AccessMCPResource:   {"server_name", "uri"},
					toolcall.AskFollowupQuestion: {"question", "options"},
					toolcall.AttemptCompletion:   {"result"},
				}[b.Name] {
					if b.Params[param] == "" {
						t.Errorf("example %s lacks %s:\n%s", b.Name, param, b.Raw)
					}
				}
				if a, ok := b.Params["arguments"]; ok && !json.Valid([]byte(a)) {
					t.Errorf("example arguments are not JSON: %s", a)
				}
				if o, ok := b.Params["options"]; ok {
					var opts []string
					if err := json.Unmarshal([]byte(o), &opts); err != nil || len(opts) < 2 || len(opts) > 5 {
						t.Errorf("example options %s are not 2-5 strings", o)
					}
				}
			}
			want := []string{
				toolcall.UseMCPTool, toolcall.AccessMCPResource, toolcall.AskFollowupQuestion, toolcall.AttemptCompletion, // usage
				toolcall.UseMCPTool, toolcall.AccessMCPResource, toolcall.AskFollowupQuestion, toolcall.AttemptCompletion, // examples
			}
			if !slices.Equal(names, want) {
				t.Errorf("blocks in prompt = %v, want %v", names, want)
			}
			if r.Thinking != "" {
				t.Errorf("prompt text opened a thinking block: %q", r.Thinking)
			}
			if !strings.Contains(r.Text, "# Guidelines") {
				t.Error("text after the examples was swallowed by a block")
			}
		})
	}
}

// TestRealCatalog builds the prompt from the catalog of the test server
// hub/testdata/echo, read through the hub.
func TestRealCatalog(t *testing.T) {
	testCatalog(t, map[string]any{"echo": testenv.EchoEntry(t)},
		"## echo\n", "- echo: Echoes its message.\n", "- add: Adds two numbers.", "echo://static/readme.md", "echo://dynamic/{id}")
}

// TestInteropEverything builds the prompt from the catalog of
// @modelcontextprotocol/server-everything; it skips where Node is absent.
func TestInteropEverything(t *testing.T) {
	testCatalog(t, map[string]any{"everything": testenv.EverythingEntry(t)},
		"## everything\n", "- echo: Echoes back the input string\n", "- get-sum: ", "demo://resource/dynamic/text/{resourceId}")
}

// testCatalog checks that the prompt from the servers' real catalog holds
// wants, and that its examples parse as the golden prompts' do.
func testCatalog(t *testing.T, servers map[string]any, wants ...string) {
	t.Helper()
	path := testenv.WriteSettings(t, t.TempDir(), servers)
	h := testenv.StartHub(t, path, hub.Options{NoWatch: true})
	testenv.Running(t, h)
	p := prompt.Build(h.Catalog())
	holds(t, "prompt", p, wants...)
	if r := toolcall.Parse(p); len(r.Blocks) != 8 {
		t.Errorf("prompt from the real catalog parses into %d blocks, want the 8 printed examples", len(r.Blocks))
	}
	t.Logf("prompt from the real catalog: %d bytes", len(p))
}

// golden compares got with testdata/NAME.golden; -update writes the file
// first.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./prompt -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("prompt differs from %s (run go test ./prompt -update and review the diff):\n%s", path, got)
	}
}

// holds checks that text, the one named what, holds each of wants.
func holds(t *testing.T, what, text string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(text, want) {
			t.Errorf("%s lacks %q", what, want)
		}
	}
}

// holdsNone checks that text, the one named what, holds none of absent.
func holdsNone(t *testing.T, what, text string, absent ...string) {
	t.Helper()
	for _, a := range absent {
		if strings.Contains(text, a) {
			t.Errorf("%s holds %q", what, a)
		}
	}
}
