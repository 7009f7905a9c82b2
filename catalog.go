package mcpgram

import (
	"encoding/json"
	"slices"
	"strings"
	"time"
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

// A Cause is why a server that should serve does not, where the hub can
// tell it from the failure; each has its own fix, which the server's
// Error names after the cause ("needs sign-in: run mcpgram mcp login
// tracker").
type Cause string

// The causes the hub tells apart, all of remote servers.
const (
	// CauseSignIn: the server asks for a sign-in and none is kept, or none
	// can be (no OAUTH_KEY where mcpgram makes none).
	CauseSignIn Cause = "needs sign-in"
	// CauseKey: a sign-in is kept, but it does not open with this
	// OAUTH_KEY (the key changed since it was made).
	CauseKey Cause = "sign-in unusable"
	// CauseUnreachable: the server's address does not answer (connection
	// refused, no such host, no route); it is retried.
	CauseUnreachable Cause = "unreachable"
)

// A Tool is one tool offered by a server.
type Tool struct {
	Name string
	// Title is the tool's display name as its server gives it (its title,
	// else its annotations' title); often empty. The prompt does not
	// show it; the tool search reads it.
	Title       string
	Description string
	// InputSchema is the tool's JSON Schema as compact JSON; never empty
	// (servers that send none get {"type":"object"}).
	InputSchema json.RawMessage
	// OutputSchema is the JSON Schema the tool's structured results
	// follow, as compact JSON; nil when it declares none. The hub checks
	// each result against it.
	OutputSchema json.RawMessage
	// ConsentWhen, when not nil, says which calls need the user's own
	// consent: those whose argument named by a key equals one of its
	// values; an empty map means every call. The server declares it in
	// the tool's _meta (the hub reads it, see hub.MetaConsentWhen).
	ConsentWhen map[string][]string
	// PerUser: the tool acts for the calling user, whose results are
	// theirs alone (the hub reads it from the tool's _meta, see
	// hub.MetaPerUser).
	PerUser bool
	// Hints are what the server says of the tool's behaviour (MCP's tool
	// annotations). They are the server's claim, not checked: shown to a
	// person who approves a call, never a reason to run one.
	Hints Hints
	// App is what the tool declares for MCP Apps (its _meta.ui): the
	// page that shows its results, and who may call it.
	App ToolApp
}

// A ToolApp is a tool's metadata under MCP Apps (the extension
// io.modelcontextprotocol/ui, SEP-1865). The zero ToolApp, a tool that
// declares none, names no page and hides from nobody: the spec's default
// visibility, ["model", "app"].
type ToolApp struct {
	// ResourceURI is the ui:// resource that shows the tool's results;
	// "" when it names none, or one the hub refused.
	ResourceURI string
	// Hidden is who the tool's visibility leaves out; zero, none.
	Hidden Audience
}

// AppsExtension is MCP Apps' extension identifier, which a client names
// in its capabilities when it can show apps, and AppMIMEType the MIME type
// of an app's page.
const (
	AppsExtension = "io.modelcontextprotocol/ui"
	AppMIMEType   = "text/html;profile=mcp-app"
)

// An Audience is who may see and call a tool under MCP Apps'
// visibility: the model, an app (a server's own page), or both.
type Audience uint8

// The audiences of MCP Apps' visibility, "model" and "app".
const (
	AudienceModel Audience = 1 << iota
	AudienceApp
)

// VisibleTo reports whether a may see and call t: the tool's visibility
// names a (or, given none, names both).
func (t Tool) VisibleTo(a Audience) bool {
	return t.App.Hidden&a == 0
}

// A ToolRef names one tool of one server.
type ToolRef struct {
	Server, Tool string
}

// Hints are MCP's tool annotations readOnlyHint, destructiveHint,
// idempotentHint and openWorldHint; nil where the server gave none.
type Hints struct {
	// ReadOnly: the tool changes nothing in its environment.
	ReadOnly *bool
	// Destructive: when not read-only, it may delete or overwrite
	// (false: it only adds).
	Destructive *bool
	// Idempotent: when not read-only, calling it again with the same
	// arguments has no further effect.
	Idempotent *bool
	// OpenWorld: it reaches entities outside itself (the web, other
	// people's systems); false: a closed domain, such as its own store.
	OpenWorld *bool
}

// Given reports whether the server gave any hint.
func (h Hints) Given() bool {
	return h.ReadOnly != nil || h.Destructive != nil || h.Idempotent != nil || h.OpenWorld != nil
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
	// App is what an MCP App's page declares of itself in the listing
	// (its _meta.ui), nil when it declares nothing; a read's own
	// declaration (Content's App) comes first.
	App *AppPage
}

// A ResourceTemplate is a parameterised resource URI offered by a server.
type ResourceTemplate struct {
	URITemplate string
	Name        string
	Description string
	MIMEType    string
}

// A Prompt is a prompt template a server offers the user (MCP's
// prompts): chosen by name, its arguments asked, its messages sent as
// the user's turn.
type Prompt struct {
	Name string
	// Title is the prompt's display name, one line; often empty.
	Title       string
	Description string
	Arguments   []PromptArgument
}

// A PromptArgument is one argument of a prompt: a string, required or
// not as the server says.
type PromptArgument struct {
	Name        string
	Title       string
	Description string
	Required    bool
}

// A ServerInfo is a snapshot of one configured server: its settings that
// callers need, its state, and its catalog.
type ServerInfo struct {
	Name   string
	Status Status
	// Error says why a failed server failed, in one line; where Cause is
	// set, it begins with the cause and names the fix.
	Error string
	// Cause is why the server is down where the hub can tell (a remote
	// server's sign-in or address); "" otherwise.
	Cause Cause
	// LastError says why it last failed, kept once it runs again (after
	// a restart), so that a server that was stopped for going past a
	// bound still says so.
	LastError string
	// ExitCode of the last process, or -1 when it has not exited.
	ExitCode int
	// LastStderr is the last non-empty line the server wrote to stderr.
	LastStderr string
	// Restarts counts automatic restarts since the hub started.
	Restarts int
	// Protocol is the MCP revision spoken with the running server.
	Protocol string
	// Description is what the server says it is for, in one line: the
	// description (or else the title) it gives of itself when it starts,
	// or else the first sentence of its instructions; "" when it says
	// nothing. The prompt shows it where it lists servers without their
	// tools.
	Description string
	// Title is the server's display name (its serverInfo.title), on one
	// line of at most 200 characters; "" when it gives none, or its
	// name. Shown beside the name, never in its place: the server
	// chooses it.
	Title string

	Timeout     time.Duration
	AutoApprove []string
	// PerUser: the settings say every tool and resource of the server
	// acts for the calling user ("perUser": true).
	PerUser bool

	// Sandbox is the sandbox a stdio server runs (or would run) in:
	// "bubblewrap" or "landlock". It is empty for a remote server and for
	// one that runs unconfined, for which NotSandboxed says why (or why it
	// may not start at all, when its settings require a sandbox).
	Sandbox      string
	NotSandboxed string
	// UID is the user a stdio server runs as where the bot runs as root
	// (each server has its own, never root); 0 where it runs as the bot's
	// user.
	UID int
	// Bounds are what a stdio server may take of the machine.
	Bounds Bounds

	// Notes say what screening refused or cut, one line each, for the
	// operator.
	Notes []string

	// Tools, Resources and ResourceTemplates are sorted by name (URI for
	// resources) and empty unless the server is running. They are as the
	// server listed them, screened (the hub's Screen).
	Tools             []Tool
	Resources         []Resource
	ResourceTemplates []ResourceTemplate
	// Prompts are the server's prompts, sorted by name and screened like
	// its tools; Completions says the server offers completion/complete
	// for their arguments.
	Prompts     []Prompt
	Completions bool
	// SignIn says the server needs the operator's sign-in: it asked for
	// one and none is kept (an admin signs in from /servers, or with
	// mcpgram mcp login).
	SignIn bool
	// Account is whose account a remote server acts as: "operator" (one
	// sign-in for every chat) or "user" (each user's own); "" for a
	// local server.
	Account string

	// hiddenPerUser: Catalog.For left out a tool declared per user, which
	// still makes the server's resources per user (see ActsPerUser).
	hiddenPerUser bool
}

// Bounds are what one stdio server may take of the machine; 0 leaves one
// unbounded.
type Bounds struct {
	// Memory bounds the memory of the server's processes together, and
	// of each alone, in bytes.
	Memory int64
	// Processes bounds its processes and threads at once.
	Processes int64
	// Tmp bounds its private /tmp and /dev/shm, each, in bytes (under
	// bubblewrap, which gives it them).
	Tmp int64
	// FileSize bounds any one file it writes, in bytes.
	FileSize int64
}

// Prompt returns the named prompt of s.
func (s ServerInfo) Prompt(name string) (Prompt, bool) {
	if i := slices.IndexFunc(s.Prompts, func(p Prompt) bool { return p.Name == name }); i >= 0 {
		return s.Prompts[i], true
	}
	return Prompt{}, false
}

// Tool returns the named tool of s.
func (s ServerInfo) Tool(name string) (Tool, bool) {
	if i := slices.IndexFunc(s.Tools, func(t Tool) bool { return t.Name == name }); i >= 0 {
		return s.Tools[i], true
	}
	return Tool{}, false
}

// ActsPerUser reports whether a call of tool (or, when tool is "", a read
// of resource uri) acts for the calling user, its result theirs alone: the
// settings say so of the server, or the tool of itself. A server that
// declares any of its tools per user reads its resources per user too,
// a tool that Catalog.For hid included.
func (s ServerInfo) ActsPerUser(tool, uri string) bool {
	if s.PerUser {
		return true
	}
	if tool != "" {
		t, ok := s.Tool(tool)
		return ok && t.PerUser
	}
	return uri != "" && (s.hiddenPerUser || slices.ContainsFunc(s.Tools, func(t Tool) bool { return t.PerUser }))
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

// For returns c as audience a sees it: each server's tools without those
// whose visibility leaves a out (Tool.VisibleTo). The model's view of the
// catalog is c.For(AudienceModel): a tool it does not list is to the
// model as a tool the server does not have. c is not changed, and is
// returned as it is when it hides no tool from a; the result depends on
// c alone, so what is cached by c.Version stays valid for it.
func (c Catalog) For(a Audience) Catalog {
	hidden := func(t Tool) bool { return !t.VisibleTo(a) }
	var servers []ServerInfo
	for i, s := range c.Servers {
		if !slices.ContainsFunc(s.Tools, hidden) {
			continue
		}
		if servers == nil {
			servers = slices.Clone(c.Servers)
		}
		kept := make([]Tool, 0, len(s.Tools))
		for _, t := range s.Tools {
			switch {
			case t.VisibleTo(a):
				kept = append(kept, t)
			case t.PerUser:
				servers[i].hiddenPerUser = true
			}
		}
		servers[i].Tools = kept
	}
	if servers != nil {
		c.Servers = servers
	}
	return c
}

// Coming reports whether s is on its way up (starting or restarting): a
// call to it waits for it, up to its timeout.
func (s ServerInfo) Coming() bool {
	return s.Status == StatusStarting || s.Status == StatusRestarting
}

// Down reports whether s should serve and cannot: it failed, whether or
// not it is being retried (a remote server is, and so is a server that
// crashed after it ran). A server starting for the first time, disabled
// or stopped is not down.
func (s ServerInfo) Down() bool {
	return s.Status == StatusFailed || s.Coming() && s.Error != ""
}

// Problem says in one line why s is down, with the fix where the hub
// knows it: its Error where a Cause names it, else "failed: " or
// "restarting: " and the Error; "" when s is not down. The terminal and
// Telegram show it alike.
func (s ServerInfo) Problem() string {
	switch {
	case !s.Down():
		return ""
	case s.Cause != "":
		return s.Error
	case s.Status == StatusFailed:
		return "failed: " + s.Error
	}
	return "restarting: " + s.Error
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
