package main_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// docPage reads a page of docs/.
func docPage(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testenv.Root(t), "docs", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// tableRows are the rows of the Markdown table that follows heading on
// page, each split into its cells.
func tableRows(t *testing.T, page, heading string) [][]string {
	t.Helper()
	_, rest, ok := strings.Cut(page, "\n"+heading+"\n")
	if !ok {
		t.Fatalf("no heading %q", heading)
	}
	var rows [][]string
	for _, line := range strings.Split(rest, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "| ---"), line == "" && rows == nil:
			continue
		case !strings.HasPrefix(line, "|"):
			if rows != nil {
				return rows[1:] // the header is no row
			}
			continue
		}
		var cells []string
		for _, c := range strings.Split(strings.Trim(line, "|"), " | ") {
			cells = append(cells, strings.TrimSpace(c))
		}
		rows = append(rows, cells)
	}
	if len(rows) < 2 {
		t.Fatalf("no table under %q", heading)
	}
	return rows[1:]
}

// codeSpanRE is a span of code in Markdown.
var codeSpanRE = regexp.MustCompile("`([^`]+)`")

// shellWords splits a command line as a shell does, for the single
// quotes the pages use.
func shellWords(s string) []string {
	var words []string
	var b strings.Builder
	in, quoted := false, false
	for _, r := range s {
		switch {
		case r == '\'':
			quoted, in = !quoted, true
		case r == ' ' && !quoted:
			if in {
				words = append(words, b.String())
				b.Reset()
			}
			in = false
		default:
			b.WriteRune(r)
			in = true
		}
	}
	if in {
		words = append(words, b.String())
	}
	return words
}

// Each example of docs/commands.md's exit codes runs, with the
// repository's settings, as the table says it exits.
func TestExitCodesDocumented(t *testing.T) {
	t.Parallel()
	b := buildBinary(t)
	shipped, err := os.ReadFile(filepath.Join(testenv.Root(t), "mcp-settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	settings := filepath.Join(testenv.OpenDir(t), "mcp-settings.json")
	if err := os.WriteFile(settings, shipped, 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + filepath.Dir(testenv.Bundled(t, "mcp-memory")) + string(os.PathListSeparator) + os.Getenv("PATH"), "MCP_SETTINGS=" + settings}
	codes := map[int]bool{}
	for _, row := range tableRows(t, docPage(t, "commands.md"), "## Exit codes") {
		want, err := strconv.Atoi(row[0])
		if err != nil || len(row) != 3 {
			t.Fatalf("row %q: want a code, when and examples", row)
		}
		codes[want] = true
		var examples []string
		for _, m := range codeSpanRE.FindAllStringSubmatch(row[2], -1) {
			if strings.HasPrefix(m[1], "mcpgram ") {
				examples = append(examples, m[1])
			}
		}
		if len(examples) == 0 {
			t.Errorf("exit %d has no example", want)
		}
		for _, ex := range examples {
			t.Run(ex, func(t *testing.T) {
				_, stderr, code := b.run(env, shellWords(ex)[1:]...)
				if code != want {
					t.Errorf("exit %d, want %d as docs/commands.md says\nstderr:\n%s", code, want, stderr)
				}
			})
		}
	}
	for _, c := range []int{0, 1, 2} {
		if !codes[c] {
			t.Errorf("docs/commands.md's exit codes lack %d", c)
		}
	}
}
