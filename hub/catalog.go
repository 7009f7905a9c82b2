package hub

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// A Status is the state of one configured server.
type Status string

// The states a server moves through.
const (
	StatusStarting Status = "starting"
	// StatusRestarting is a server that crashed (Error says how) and waits
	// out its back-off before starting again; calls wait for it.
	StatusRestarting Status = "restarting"
	StatusRunning    Status = "running"
	StatusDisabled   Status = "disabled"
	StatusFailed     Status = "failed"
	StatusStopped    Status = "stopped"
)

// A Tool is one tool offered by a server.
type Tool struct {
	Name        string
	Description string
	// InputSchema is the tool's JSON Schema as compact JSON; never empty
	// (servers that send none get {"type":"object"}).
	InputSchema json.RawMessage
	// ConsentWhen, when not nil, says which calls need the user's own
	// consent: those whose argument named by a key equals one of its
	// values; an empty map means every call. See MetaConsentWhen.
	ConsentWhen map[string][]string
}

// NeedsConsent reports whether a call of t with args needs the user's
// own consent.
func (t Tool) NeedsConsent(args map[string]any) bool {
	if t.ConsentWhen == nil {
		return false
	}
	if len(t.ConsentWhen) == 0 {
		return true
	}
	for name, values := range t.ConsentWhen {
		v, ok := args[name].(string)
		if ok && slices.Contains(values, v) {
			return true
		}
		// A value that is not a string cannot be matched, so it is
		// treated as needing consent: the server may read it leniently.
		if _, present := args[name]; present && !ok {
			return true
		}
	}
	return false
}

// A Resource is one concrete resource offered by a server.
type Resource struct {
	URI         string
	Name        string
	Description string
	MIMEType    string
}

// A ResourceTemplate is a parameterised resource URI offered by a server.
type ResourceTemplate struct {
	URITemplate string
	Name        string
	Description string
	MIMEType    string
}

// A ServerInfo is a snapshot of one configured server: its settings that
// callers need, its state, and its catalog.
type ServerInfo struct {
	Name   string
	Status Status
	// Error says why a failed server failed, in one line.
	Error string
	// ExitCode of the last process, or -1 when it has not exited.
	ExitCode int
	// LastStderr is the last non-empty line the server wrote to stderr.
	LastStderr string
	// Restarts counts automatic restarts since the hub started.
	Restarts int

	Timeout     time.Duration
	AutoApprove []string

	// Tools, Resources and ResourceTemplates are sorted by name (URI for
	// resources) and empty unless the server is running. They are as the
	// server listed them, screened (see Screen).
	Tools             []Tool
	Resources         []Resource
	ResourceTemplates []ResourceTemplate
	// Notes say what screening refused or cut, one line each, for the
	// operator.
	Notes []string
}

// Tool returns the named tool of s.
func (s ServerInfo) Tool(name string) (Tool, bool) {
	if i := slices.IndexFunc(s.Tools, func(t Tool) bool { return t.Name == name }); i >= 0 {
		return s.Tools[i], true
	}
	return Tool{}, false
}

// AutoApproves reports whether tool may run without asking the user.
func (s ServerInfo) AutoApproves(tool string) bool {
	return slices.Contains(s.AutoApprove, tool)
}

// ResourcePrefix marks an autoApprove entry that covers resource reads:
// "resource:URI" one URI, "resource:PREFIX*" every URI that starts with
// PREFIX, "resource:*" every resource of the server. Tool names have no
// colon, so the two kinds of entry never meet.
const ResourcePrefix = "resource:"

// AutoApprovesResource reports whether reading uri may go without asking.
func (s ServerInfo) AutoApprovesResource(uri string) bool {
	for _, entry := range s.AutoApprove {
		pattern, ok := strings.CutPrefix(entry, ResourcePrefix)
		if !ok {
			continue
		}
		if prefix, wild := strings.CutSuffix(pattern, "*"); wild && strings.HasPrefix(uri, prefix) || pattern == uri {
			return true
		}
	}
	return false
}

// A Catalog is a snapshot of every configured server, sorted by name.
type Catalog struct {
	// Version changes whenever any server's state or catalog changes, so
	// consumers can cache what they derive from a catalog.
	Version uint64
	Servers []ServerInfo
}

// Server returns the named server of c.
func (c Catalog) Server(name string) (ServerInfo, bool) {
	if i, ok := slices.BinarySearchFunc(c.Servers, name, func(s ServerInfo, name string) int {
		return strings.Compare(s.Name, name)
	}); ok {
		return c.Servers[i], true
	}
	return ServerInfo{}, false
}

// Coming reports whether s is on its way up (starting or restarting): a
// call to it waits for it, up to its timeout.
func (s ServerInfo) Coming() bool {
	return s.Status == StatusStarting || s.Status == StatusRestarting
}

// Running returns the servers of c that are running, in name order.
func (c Catalog) Running() []ServerInfo {
	var out []ServerInfo
	for _, s := range c.Servers {
		if s.Status == StatusRunning {
			out = append(out, s)
		}
	}
	return out
}

// What a server's catalog may hold. Tool and server names follow MCP's
// guidance (specification 2025-11-25, "Tool names"): 1 to 128 of A-Z a-z
// 0-9 _ - . — so no name can carry a line break, markup or a hidden
// character into the prompt or the screens. A description longer than
// MaxDescription characters is cut: it goes into the prompt of every
// call, and 2,000 characters say what any tool does.
const (
	MaxName        = 128
	MaxDescription = 2000
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
func Screen(tools []Tool, resources []Resource, templates []ResourceTemplate) ([]Tool, []Resource, []ResourceTemplate, []string) {
	var notes []string
	seen := map[string]bool{}
	keptTools := make([]Tool, 0, len(tools))
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
		keptTools = append(keptTools, t)
	}
	keptResources := make([]Resource, 0, len(resources))
	for _, r := range resources {
		if !plainURI(r.URI) {
			notes = append(notes, "refused a resource: the URI "+quoteShort(r.URI)+" holds white space or characters that do not print")
			continue
		}
		r.Description = cutDescription(r.Description, "resource "+r.URI, &notes)
		keptResources = append(keptResources, r)
	}
	keptTemplates := make([]ResourceTemplate, 0, len(templates))
	for _, r := range templates {
		if !plainURI(r.URITemplate) {
			notes = append(notes, "refused a resource template: "+quoteShort(r.URITemplate)+" holds white space or characters that do not print")
			continue
		}
		r.Description = cutDescription(r.Description, "resource template "+r.URITemplate, &notes)
		keptTemplates = append(keptTemplates, r)
	}
	if len(notes) > maxNotes {
		notes = append(notes[:maxNotes-1], fmt.Sprintf("and %d more changes like these", len(notes)-(maxNotes-1)))
	}
	return keptTools, keptResources, keptTemplates, notes
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

// plainURI reports whether a resource URI (or template) is one line of
// printable characters, of a sensible length.
func plainURI(u string) bool {
	if u == "" || len(u) > maxURI || !utf8.ValidString(u) {
		return false
	}
	return !strings.ContainsFunc(u, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) })
}
