package hub

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mcpgram/mcpgram"
)

// What a server's catalog may hold. Tool and server names follow MCP's
// guidance (specification 2025-11-25, "Tool names"): 1 to 128 of A-Z a-z
// 0-9 _ - . — so no name can carry a line break, markup or a hidden
// character into the prompt or the screens. A description longer than
// MaxDescription characters is cut: it goes into the prompt of every
// call, and 2,000 characters say what any tool does.
const (
	MaxName        = 128
	MaxDescription = 2000
	// MaxTitle bounds a tool's title, which the tool search reads: a
	// display name, one line.
	MaxTitle = 200
	// maxURI bounds a resource's URI or URI template.
	maxURI = 2048
)

var nameSyntax = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)

// CheckName reports why name cannot name a tool, or nil.
func CheckName(name string) error {
	if nameSyntax.MatchString(name) {
		return nil
	}
	return fmt.Errorf("%s is not a valid name: use 1 to %d of A-Z a-z 0-9 . _ -", quoteShort(name), MaxName)
}

// CheckServerName reports why name (a key of the settings file's
// mcpServers) cannot name a server, or nil. A server name is one line of
// up to 128 letters and digits of any script, _ - . and single spaces
// between words: a settings file names servers as people do, and nothing
// in such a name can start a line of the prompt or hide.
func CheckServerName(name string) error {
	ok := name != "" && utf8.RuneCountInString(name) <= MaxName && strings.TrimSpace(name) == name && !strings.Contains(name, "  ")
	for _, r := range name {
		ok = ok && (unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) || strings.ContainsRune("_-. ", r))
	}
	if ok {
		return nil
	}
	return fmt.Errorf("%s is not a valid server name: use 1 to %d letters, digits, _ - . and single spaces", quoteShort(name), MaxName)
}

// quoteShort quotes s for a message, cut to 60 characters, every
// character that does not print escaped.
func quoteShort(s string) string {
	if r := []rune(s); len(r) > 60 {
		s = string(r[:59]) + "…"
	}
	return strconv.QuoteToASCII(s)
}

// Screen checks a catalog as a server listed it, before anyone sees it:
// it leaves out the tools whose names are not valid (CheckName) or given
// twice (the first stays), and the resources and templates whose URIs
// hold white space or characters that do not print, and cuts every
// description to MaxDescription characters. Each change is a note.
func Screen(tools []mcpgram.Tool, resources []mcpgram.Resource, templates []mcpgram.ResourceTemplate) ([]mcpgram.Tool, []mcpgram.Resource, []mcpgram.ResourceTemplate, []string) {
	var notes []string
	seen := map[string]bool{}
	keptTools := make([]mcpgram.Tool, 0, len(tools))
	for _, t := range tools {
		switch err := CheckName(t.Name); {
		case err != nil:
			notes = append(notes, "refused a tool: "+err.Error())
			continue
		case seen[t.Name]:
			notes = append(notes, fmt.Sprintf("refused a second tool named %q", t.Name))
			continue
		}
		seen[t.Name] = true
		t.Description = cutDescription(t.Description, "tool "+strconv.Quote(t.Name), &notes)
		t.Title = cutTitle(t.Title, t.Name, &notes)
		keptTools = append(keptTools, t)
	}
	keptResources := make([]mcpgram.Resource, 0, len(resources))
	for _, r := range resources {
		if !plainURI(r.URI) {
			notes = append(notes, "refused a resource: the URI "+quoteShort(r.URI)+" holds white space or characters that do not print")
			continue
		}
		r.Description = cutDescription(r.Description, "resource "+r.URI, &notes)
		keptResources = append(keptResources, r)
	}
	keptTemplates := make([]mcpgram.ResourceTemplate, 0, len(templates))
	for _, r := range templates {
		if !plainURI(r.URITemplate) {
			notes = append(notes, "refused a resource template: "+quoteShort(r.URITemplate)+" holds white space or characters that do not print")
			continue
		}
		r.Description = cutDescription(r.Description, "resource template "+r.URITemplate, &notes)
		keptTemplates = append(keptTemplates, r)
	}
	return keptTools, keptResources, keptTemplates, capNotes(notes)
}

// capNotes keeps the first maxNotes notes, counting the rest.
func capNotes(notes []string) []string {
	if len(notes) > maxNotes {
		notes = append(notes[:maxNotes-1:maxNotes-1], fmt.Sprintf("and %d more changes like these", len(notes)-(maxNotes-1)))
	}
	return notes
}

// maxNotes bounds the notes on one server: a server that lists ten
// thousand broken tools gets a screenful, not ten thousand log lines.
const maxNotes = 20

// cutDescription cuts d to MaxDescription characters, noting it for what.
func cutDescription(d, what string, notes *[]string) string {
	n := utf8.RuneCountInString(d)
	if n <= MaxDescription {
		return d
	}
	*notes = append(*notes, fmt.Sprintf("cut the description of %s from %d to %d characters", what, n, MaxDescription))
	return string([]rune(d)[:MaxDescription-1]) + "…"
}

// cutTitle folds the title of a tool, prompt or server (named by name)
// onto one line and cuts it to MaxTitle characters, noting the cut.
func cutTitle(title, name string, notes *[]string) string {
	title = strings.Join(strings.Fields(title), " ")
	if n := utf8.RuneCountInString(title); n > MaxTitle {
		*notes = append(*notes, fmt.Sprintf("cut the title of %q from %d to %d characters", name, n, MaxTitle))
		title = string([]rune(title)[:MaxTitle-1]) + "…"
	}
	return title
}

// plainURI reports whether a resource URI (or template) is one line of
// printable characters, of a sensible length.
func plainURI(u string) bool {
	if u == "" || len(u) > maxURI || !utf8.ValidString(u) {
		return false
	}
	return !strings.ContainsFunc(u, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) })
}
