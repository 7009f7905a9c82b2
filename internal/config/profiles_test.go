package config_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/internal/config"
)

// Without models:, today's settings make the one profile, the default.
func TestProfileFromTheEnvironment(t *testing.T) {
	c, err := load(t, nil, map[string]string{
		"OPENAI_API_KEY": "sk-env-0123456789", "OPENAI_BASE_URL": "http://llm.local/v1/", "OPENAI_MODEL": "m1",
		"LLM_TEMPERATURE": "0.7", "LLM_MAX_TOKENS": "100", "MAX_CONTEXT_TOKENS": "9000", "MODEL_VISION": "true", "TOOL_SEARCH": "40",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := mcpgram.Profile{
		Name: "default", BaseURL: "http://llm.local/v1", APIKeyEnv: "OPENAI_API_KEY", APIKey: "sk-env-0123456789", Model: "m1",
		Temperature: 0.7, MaxTokens: 100, ContextTokens: 9000, ToolCalling: "xml", Vision: true, Prompt: "generic", ToolSearch: "40",
	}
	if len(c.Profiles) != 1 || c.Profiles[0] != want {
		t.Errorf("Profiles = %+v, want [%+v]", c.Profiles, want)
	}
	if c.DefaultProfile != "default" {
		t.Errorf("DefaultProfile = %q, want default", c.DefaultProfile)
	}
	if err := c.RequireModel(); err != nil {
		t.Errorf("RequireModel: %v", err)
	}
}

const twoModels = `models:
  local:
    base_url: "http://localhost:11434/v1/"
    api_key_env: LOCAL_KEY
    model: llama3.1:8b
    temperature: 0.1
    max_tokens: 0
    context_tokens: 8000
    tool_calling: native
    tool_search: 5%
    vision: true
    prompt: llama
  coder:
    base_url: https://openrouter.ai/api/v1
    api_key_env: CODER_KEY
    model: qwen-coder
    prompt: code
`

func TestProfilesFromYAML(t *testing.T) {
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "coder.key")
	if err := os.WriteFile(keyFile, []byte("sk-coder-from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := load(t, map[string]string{"mcpgram.yaml": "default_model: coder\n" + twoModels, ".env": "LOCAL_KEY=sk-local-dotenv\n"},
		map[string]string{"OPENAI_API_KEY": "sk-env-0123456789", "CODER_KEY_FILE": keyFile})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range c.Profiles {
		names = append(names, p.Name)
	}
	if want := []string{"default", "local", "coder"}; !slices.Equal(names, want) {
		t.Errorf("profiles = %v, want %v (the environment's, then models: as written)", names, want)
	}
	if c.DefaultProfile != "coder" {
		t.Errorf("DefaultProfile = %q, want coder", c.DefaultProfile)
	}
	local, _ := c.Profile("local")
	want := mcpgram.Profile{
		Name: "local", BaseURL: "http://localhost:11434/v1", APIKeyEnv: "LOCAL_KEY", APIKey: "sk-local-dotenv", Model: "llama3.1:8b",
		Temperature: 0.1, MaxTokens: 0, ContextTokens: 8000, ToolCalling: "native", Vision: true, Prompt: "llama", ToolSearch: "5%",
	}
	if local != want {
		t.Errorf("local = %+v, want %+v", local, want)
	}
	coder, _ := c.Profile("coder")
	want = mcpgram.Profile{
		Name: "coder", BaseURL: "https://openrouter.ai/api/v1", APIKeyEnv: "CODER_KEY", APIKey: "sk-coder-from-file", Model: "qwen-coder",
		Temperature: 0.2, MaxTokens: 4096, ContextTokens: 32000, ToolCalling: "xml", Vision: false, Prompt: "code", ToolSearch: "10%",
	}
	if coder != want {
		t.Errorf("coder (defaults filled) = %+v, want %+v", coder, want)
	}
	if err := c.RequireModel(); err != nil {
		t.Errorf("RequireModel: %v", err)
	}
	for _, key := range []string{"sk-local-dotenv", "sk-coder-from-file"} {
		if !slices.Contains(c.Secrets(), key) {
			t.Errorf("Secrets lacks the key %q, so the log would not redact it", key)
		}
	}
	var buf bytes.Buffer
	if err := c.Print(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if strings.Contains(out, "sk-local") || strings.Contains(out, "sk-coder") {
		t.Errorf("Print shows a profile's key:\n%s", out)
	}
	if !strings.Contains(out, "models.local: base_url=http://localhost:11434/v1 api_key_env=LOCAL_KEY model=llama3.1:8b") {
		t.Errorf("Print lacks the local profile:\n%s", out)
	}
}

// With another profile the default and no OPENAI_API_KEY, the
// environment's profile is left out rather than failing for a key that
// was never meant to be set.
func TestEnvironmentProfileLeftOut(t *testing.T) {
	c, err := load(t, map[string]string{"mcpgram.yaml": "default_model: coder\n" + twoModels},
		map[string]string{"LOCAL_KEY": "k1", "CODER_KEY": "k2"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Profile("default"); ok || len(c.Profiles) != 2 {
		t.Errorf("profiles = %+v, want local and coder alone", c.Profiles)
	}
	if err := c.RequireModel(); err != nil {
		t.Errorf("RequireModel: %v", err)
	}
}

func TestProfileErrorsNameProfileAndField(t *testing.T) {
	profile := func(name, fields string) string {
		return "models:\n  " + name + ":\n    base_url: http://x/v1\n    api_key_env: K\n    model: m\n" + fields
	}
	tests := []struct {
		name, yaml string
		env        map[string]string
		want       []string
	}{
		{"unknown field", profile("fast", "    temprature: 0.5\n"), nil, []string{"models.fast", `unknown field "temprature"`, `did you mean "temperature"`}},
		{"bad temperature", profile("fast", "    temperature: hot\n"), nil, []string{"models.fast.temperature", "0 to 2"}},
		{"bad max tokens", profile("fast", "    max_tokens: -1\n"), nil, []string{"models.fast.max_tokens"}},
		{"small context", profile("fast", "    context_tokens: 10\n"), nil, []string{"models.fast.context_tokens"}},
		{"bad tool calling", profile("fast", "    tool_calling: json\n"), nil, []string{"models.fast.tool_calling", "xml, native, auto"}},
		{"bad vision", profile("fast", "    vision: maybe\n"), nil, []string{"models.fast.vision"}},
		{"bad tool search", profile("fast", "    tool_search: 150%\n"), nil, []string{"models.fast.tool_search", "from 1% to 100%", `"150%"`}},
		{"misspelt tool search", profile("fast", "    tool_serach: off\n"), nil, []string{"models.fast", `did you mean "tool_search"`}},
		{"bad global tool search", profile("fast", ""), map[string]string{"TOOL_SEARCH": "many"}, []string{"TOOL_SEARCH: want off, a number of tools"}},
		{"bad pinned tools", profile("fast", ""), map[string]string{"PINNED_TOOLS": "memory/memory, clock"}, []string{"PINNED_TOOLS", `got "clock"`}},
		{"bad prompt", profile("fast", "    prompt: mistral\n"), nil, []string{"models.fast.prompt", "generic, llama, code"}},
		{"no model", "models:\n  fast:\n    base_url: http://x/v1\n    api_key_env: K\n", nil, []string{"models.fast.model"}},
		{"no base url", "models:\n  fast:\n    api_key_env: K\n    model: m\n", nil, []string{"models.fast.base_url"}},
		{"key instead of its name", profile("fast", "")[:0] + "models:\n  fast:\n    base_url: http://x/v1\n    api_key_env: sk-abc123\n    model: m\n", nil, []string{"models.fast.api_key_env", "name of the environment variable"}},
		{"name with a space", profile(`"my model"`, ""), nil, []string{`models.my model`, "button"}},
		{"upper-case name", profile("Fast", ""), nil, []string{"models.Fast", "button"}},
		{"name too long", profile(strings.Repeat("a", 33), ""), nil, []string{"models.aaaa", "1 to 32"}},
		{"the reserved name", profile("default", ""), nil, []string{"models.default", "OPENAI_*"}},
		{"duplicate", profile("fast", "") + "  fast:\n    base_url: http://y/v1\n    api_key_env: K\n    model: m\n", nil, []string{"fast"}},
		{"not a map", "models: [fast]\n", nil, []string{"models: want a map"}},
		{"profile not a map", "models:\n  fast: gpt-4o\n", nil, []string{"models.fast: want the profile's settings"}},
		{"unknown default", profile("fast", ""), map[string]string{"DEFAULT_MODEL": "fsat"}, []string{"DEFAULT_MODEL", `"fsat"`, `did you mean "fast"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := load(t, map[string]string{"mcpgram.yaml": tt.yaml}, tt.env)
			if err == nil {
				t.Fatal("Load succeeded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// A profile's key variable is checked by the commands that call models,
// as OPENAI_API_KEY is, naming the variable and the profile.
func TestProfileKeyRequired(t *testing.T) {
	c, err := load(t, map[string]string{"mcpgram.yaml": twoModels}, map[string]string{"OPENAI_API_KEY": "sk-env", "LOCAL_KEY": "k"})
	if err != nil {
		t.Fatal(err)
	}
	err = c.RequireModel()
	var miss *config.MissingError
	if !errors.As(err, &miss) || miss.Name != "CODER_KEY" || !strings.Contains(err.Error(), "models.coder.api_key_env") {
		t.Errorf("RequireModel() = %v, want CODER_KEY missing, naming models.coder.api_key_env", err)
	}
}

// The commented example in mcpgram.example.yaml is valid once uncommented.
func TestExampleModelsParse(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "mcpgram.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "# BEGIN models example\n")
	block, _, ok2 := strings.Cut(rest, "# END models example\n")
	if !ok || !ok2 {
		t.Fatal("mcpgram.example.yaml lacks the models example between its BEGIN and END lines")
	}
	var yml strings.Builder
	for _, line := range strings.SplitAfter(block, "\n") {
		yml.WriteString(strings.TrimPrefix(line, "# "))
	}
	c, err := load(t, map[string]string{"mcpgram.yaml": yml.String()}, map[string]string{"OPENAI_API_KEY": "a", "OLLAMA_API_KEY": "b", "OPENROUTER_API_KEY": "c"})
	if err != nil {
		t.Fatalf("the example: %v\n%s", err, yml.String())
	}
	if len(c.Profiles) != 3 || c.RequireModel() != nil {
		t.Errorf("the example gives %d profiles (%v), want default and two", len(c.Profiles), c.RequireModel())
	}
}

// TOOL_SEARCH is the threshold of every profile that sets none; a
// profile's tool_search overrides it; PINNED_TOOLS names tools.
func TestToolSearchSettings(t *testing.T) {
	c, err := load(t, map[string]string{"mcpgram.yaml": twoModels, ".env": "LOCAL_KEY=k\nCODER_KEY=k\n"},
		map[string]string{"OPENAI_API_KEY": "sk-env-0123456789", "TOOL_SEARCH": "off", "PINNED_TOOLS": " memory/memory , github/create_issue,"})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]mcpgram.ToolSearch{"default": "off", "local": "5%", "coder": "off"} {
		if p, _ := c.Profile(name); p.ToolSearch != want {
			t.Errorf("%s: tool search %q, want %q", name, p.ToolSearch, want)
		}
	}
	if want := []mcpgram.ToolRef{{Server: "memory", Tool: "memory"}, {Server: "github", Tool: "create_issue"}}; !slices.Equal(c.PinnedTools, want) {
		t.Errorf("PinnedTools = %+v, want %+v", c.PinnedTools, want)
	}
}
