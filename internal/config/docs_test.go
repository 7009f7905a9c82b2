package config_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram/internal/config"
)

var update = flag.Bool("update", false, "rewrite the generated table of docs/configuration.md from config.Settings")

// The markers around the part of docs/configuration.md made from
// config.Settings.
const (
	tableBegin = "<!-- BEGIN settings: generated from config.Settings by `go generate ./internal/config`; do not edit -->\n"
	tableEnd   = "<!-- END settings -->\n"
)

// settingsTable renders config.Settings as the Markdown table of
// docs/configuration.md.
func settingsTable() string {
	var b strings.Builder
	b.WriteString("| variable | default | meaning |\n| --- | --- | --- |\n")
	for _, s := range config.Settings {
		def := "(empty)"
		switch {
		case s.Secret:
			def = "(secret)"
		case s.Default != "":
			def = "`" + s.Default + "`"
		}
		help := strings.ReplaceAll(s.Help, "|", `\|`)
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", s.Name, def, help)
	}
	return b.String()
}

// docs/configuration.md holds every setting, its default and its meaning
// as config.Settings has them: the table is generated (go generate
// ./internal/config, or this test with -update), and this test fails
// while the page is not current.
func TestConfigurationPageIsCurrent(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "configuration.md")
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(page, []byte(tableBegin))
	j := bytes.Index(page, []byte(tableEnd))
	if i < 0 || j < i {
		t.Fatalf("%s: no generated settings table between %q and %q", path, tableBegin, tableEnd)
	}
	head, got, tail := page[:i+len(tableBegin)], string(page[i+len(tableBegin):j]), page[j:]
	for _, s := range config.Settings {
		if s.Help == "" {
			t.Errorf("%s has no Help, so its row in %s says nothing", s.Name, path)
		}
	}
	want := settingsTable()
	if got == want {
		return
	}
	if !*update {
		t.Fatalf("%s is not current with config.Settings: run go generate ./internal/config", path)
	}
	out := append(append(append([]byte{}, head...), want...), tail...)
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}
