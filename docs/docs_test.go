package docs_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// pages are the Markdown files whose links are checked, from the
// repository's root.
func pages(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	out := []string{"../README.md", "../mcp-servers/README.md"}
	return append(out, files...)
}

var (
	linkRE    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	headingRE = regexp.MustCompile(`(?m)^#{1,6} +(.+?)\s*$`)
	fenceRE   = regexp.MustCompile("(?ms)^```.*?^```")
)

// slug is the anchor GitHub gives a heading: lower case, punctuation
// dropped, spaces as hyphens.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors lists the anchors of a Markdown file's headings.
func anchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := fenceRE.ReplaceAllString(string(b), "")
	seen := map[string]int{}
	out := map[string]bool{}
	for _, m := range headingRE.FindAllStringSubmatch(text, -1) {
		s := slug(m[1])
		if n := seen[s]; n > 0 {
			out[s+"-"+string(rune('0'+n))] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}

// Every relative link between README and the pages names a file that
// exists and, after #, a heading that file has: a section moved or renamed
// breaks no link in silence.
func TestLinksResolve(t *testing.T) {
	for _, page := range pages(t) {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		text := fenceRE.ReplaceAllString(string(b), "")
		for _, m := range linkRE.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), file)
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s: link to %s: %v", page, target, err)
					continue
				}
			}
			if anchor != "" && !anchors(t, path)[anchor] {
				t.Errorf("%s: link to %s: %s has no heading with that anchor", page, target, path)
			}
		}
	}
}

// README is a front page: what mcpgram is, how it works, the shortest
// path to a working bot, and links; the rest is in the pages here. No
// line of any page is a wall of text.
func TestReadmeIsAFrontPage(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 10*1024 {
		t.Errorf("README.md is %d bytes, over 10 KiB: move the detail to a page under docs/ and link to it", len(b))
	}
	for _, page := range pages(t) {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if n := len([]rune(line)); n > 1000 {
				t.Errorf("%s:%d: a line of %d characters: split it into sentences or bullets", page, i+1, n)
			}
		}
	}
}

// The troubleshooting page names each status mcp list prints of a server
// the sandbox or its bounds stop, with its fix; and each phrase it names
// is one the program still says (in hub/ or cmd/), so that neither drifts
// from the other.
func TestTroubleshootingNamesEverySandboxStatus(t *testing.T) {
	page, err := os.ReadFile("troubleshooting.md")
	if err != nil {
		t.Fatal(err)
	}
	var source strings.Builder
	for _, dir := range []string{"../hub", "../cmd/mcpgram"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			source.Write(b)
		}
	}
	for _, phrase := range []string{
		"sandboxed (", "NOT SANDBOXED: ", "its sandbox cannot be had", "would let it write in", "of the bot's own",
		"does not exist yet, and its folder", "is a symbolic link where a server may write",
		"(the bot runs as root, and no server does), which cannot pass", "which may not run",
		"not found on PATH (did you mean", "it went past its", "its sandbox let it not write", "may not write",
	} {
		if !strings.Contains(string(page), phrase) {
			t.Errorf("troubleshooting.md does not name %q", phrase)
		}
		if !strings.Contains(source.String(), phrase) {
			t.Errorf("the program no longer says %q, which troubleshooting.md names", phrase)
		}
	}
}

// No tracked file is a binary (a test server built into the checkout and
// committed, say): git's own rule, a NUL byte in its first 8,000 bytes;
// but for the docs' images, PNG files in docs/img.
func TestNoBinaryIsTracked(t *testing.T) {
	out, err := exec.Command("git", "-C", "..", "ls-files", "-z").Output()
	if err != nil {
		t.Skipf("SKIPPED LOUDLY: not a git checkout (%v)", err)
	}
	for _, f := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		b, err := os.ReadFile(filepath.Join("..", f))
		if err != nil {
			continue // deleted in the work tree
		}
		if strings.HasPrefix(f, "docs/img/") && strings.HasSuffix(f, ".png") && bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
			continue
		}
		if bytes.IndexByte(b[:min(len(b), 8000)], 0) >= 0 {
			t.Errorf("%s is a binary: build it, do not commit it", f)
		}
	}
}

// The diagram of docs/development.md draws, among the packages it names,
// every direct import go list reports and no other.
func TestLayoutDiagramMatchesGoList(t *testing.T) {
	page, err := os.ReadFile("development.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(page), "```mermaid\n")
	block, _, _ = strings.Cut(block, "```")
	if !ok || block == "" {
		t.Fatal("development.md has no mermaid diagram")
	}
	const module = "github.com/mcpgram/mcpgram"
	nodes := map[string]string{} // id -> import path
	drawn := map[string]bool{}   // "from -> to", import paths
	nodeRE := regexp.MustCompile(`^\s*(\w+)\["([^"]+)"\]\s*$`)
	edgeRE := regexp.MustCompile(`^\s*(\w+) --> (\w+)\s*$`)
	for _, line := range strings.Split(block, "\n") {
		if m := nodeRE.FindStringSubmatch(line); m != nil {
			path, _, _ := strings.Cut(m[2], " ")
			if path == "mcpgram" {
				nodes[m[1]] = module
			} else {
				nodes[m[1]] = module + "/" + path
			}
		} else if m := edgeRE.FindStringSubmatch(line); m != nil {
			from, to := nodes[m[1]], nodes[m[2]]
			if from == "" || to == "" {
				t.Fatalf("edge %q names a node the diagram does not declare first", line)
			}
			drawn[from+" -> "+to] = true
		}
	}
	paths := map[string]bool{}
	for _, p := range nodes {
		paths[p] = true
	}
	args := []string{"list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`}
	for p := range paths {
		args = append(args, p)
	}
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		for _, imp := range fields[1:] {
			if !paths[imp] {
				continue
			}
			edge := fields[0] + " -> " + imp
			if !drawn[edge] {
				t.Errorf("%s imports %s: the diagram lacks the arrow", fields[0], imp)
			}
			delete(drawn, edge)
		}
	}
	for edge := range drawn {
		t.Errorf("the diagram draws %s, which go list does not report", edge)
	}
}

// Every package of bot/ has its row in docs/development.md's layout, where
// a newcomer looks for it.
func TestLayoutNamesEveryBotPackage(t *testing.T) {
	page, err := os.ReadFile("development.md")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "list", "../bot/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, path := range strings.Fields(string(out)) {
		_, dir, _ := strings.Cut(path, "/mcpgram/mcpgram/")
		if dir == "bot" {
			dir = "bot/"
		}
		if !strings.Contains(string(page), "| `"+dir+"` |") {
			t.Errorf("development.md's layout has no row for %s", dir)
		}
	}
}
