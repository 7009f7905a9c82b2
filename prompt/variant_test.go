package prompt_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/prompt"
	"github.com/mcpgram/mcpgram/toolcall"
)

// Every variant has its golden file; generic is today's prompt, byte for
// byte (servers.golden was written before variants existed).
func TestVariantGolden(t *testing.T) {
	for _, v := range mcpgram.PromptVariants() {
		t.Run(string(v), func(t *testing.T) {
			got := prompt.BuildVariant(withMemory(), v)
			golden(t, "variant_"+string(v), got)
		})
	}
	old, err := os.ReadFile(filepath.Join("testdata", "servers.golden"))
	if err != nil {
		t.Fatal(err)
	}
	if got := prompt.BuildVariant(catalog(), mcpgram.PromptGeneric); got != string(old) {
		t.Error("the generic variant differs from the prompt of servers.golden")
	}
	if prompt.BuildVariant(catalog(), "") != prompt.Build(catalog()) {
		t.Error("no variant differs from Build")
	}
}

// A variant changes the framing only: the core tools and the servers'
// tools are the same bytes in every variant.
func TestVariantsShareTheToolBytes(t *testing.T) {
	for name, cat := range map[string]mcpgram.Catalog{"servers": catalog(), "memory": withMemory(), "shapes": shapes()} {
		tools := prompt.Tools(cat)
		if !strings.HasPrefix(tools, "\n# MCP servers\n") || len(tools) < 200 {
			t.Fatalf("%s: Tools = %q, want the servers' section", name, tools)
		}
		var core string
		for _, v := range mcpgram.PromptVariants() {
			p := prompt.BuildVariant(cat, v)
			if n := strings.Count(p, tools); n != 1 {
				t.Errorf("%s, %s: the servers' tools appear %d times, want once, byte for byte", name, v, n)
			}
			c := section(t, p, "\n# Tools\n")
			if core == "" {
				core = c
			} else if c != core {
				t.Errorf("%s, %s: the core tools differ from generic's", name, v)
			}
		}
	}
	if prompt.BuildVariant(catalog(), mcpgram.PromptLlama) == prompt.BuildVariant(catalog(), mcpgram.PromptGeneric) ||
		prompt.BuildVariant(catalog(), mcpgram.PromptCode) == prompt.BuildVariant(catalog(), mcpgram.PromptGeneric) {
		t.Error("a variant is the generic prompt")
	}
}

// section returns p from heading to the next top-level heading.
func section(t *testing.T, p, heading string) string {
	t.Helper()
	i := strings.Index(p, heading)
	if i < 0 {
		t.Fatalf("prompt lacks %q", heading)
	}
	rest := p[i+len(heading):]
	if j := strings.Index(rest, "\n# "); j >= 0 {
		rest = rest[:j]
	}
	return heading + rest
}

// Every variant's printed calls parse into complete blocks, as generic's
// do (TestExamplesParse), and its text after them is not swallowed.
func TestVariantExamplesParse(t *testing.T) {
	for _, v := range mcpgram.PromptVariants() {
		p := prompt.BuildVariant(withMemory(), v)
		r := toolcall.Parse(p)
		if len(r.Blocks) != 8 {
			t.Errorf("%s: %d blocks, want the 4 usages and 4 examples", v, len(r.Blocks))
		}
		for _, b := range r.Blocks {
			if !b.Complete {
				t.Errorf("%s: example %s is cut off", v, b.Name)
			}
		}
		if !strings.Contains(r.Text, "# Guidelines") || r.Thinking != "" {
			t.Errorf("%s: the guidelines were swallowed by a block", v)
		}
	}
}

func TestVariantValid(t *testing.T) {
	for _, v := range []mcpgram.PromptVariant{"generic", "llama", "code"} {
		if !v.Valid() {
			t.Errorf("%q is not valid", v)
		}
	}
	for _, v := range []mcpgram.PromptVariant{"", "Llama", "gpt"} {
		if v.Valid() {
			t.Errorf("%q is valid", v)
		}
	}
}
