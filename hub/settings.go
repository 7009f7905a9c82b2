package hub

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/hub/internal/jsonobj"
	"github.com/mcpgram/mcpgram/internal/lines"
)

// DefaultTimeout bounds start-up and each request of a server whose settings
// name no timeout.
const DefaultTimeout = 60 * time.Second

// The range of a settings timeout, in seconds: from a tenth of a second to
// a day. Outside it a value is a mistake (1e11 seconds would even overflow
// a duration into a negative one).
const (
	minTimeout = 0.1
	maxTimeout = 86400
)

// Transport types of a server entry.
const (
	TypeStdio          = "stdio"
	TypeStreamableHTTP = "streamableHttp"
	TypeSSE            = "sse"
)

// A config is one server entry of the settings file, validated and with
// ${env:VAR} references replaced. An entry that cannot be used keeps its
// name, disabled flag and autoApprove list, and says why in err.
type config struct {
	name    string
	typ     string
	command string
	args    []string
	env     map[string]string
	// cwd is the server's working folder as its entry sets it, absolute;
	// dir is the settings file's folder, where a server runs whose entry
	// sets none (see workDir).
	cwd     string
	dir     string
	url     string
	headers map[string]string
	// oauth is the entry's "oauth" object: how to sign in to the server
	// when it asks (MCP authorization).
	oauth mcpgram.OAuthConfig
	// secretFiles are the files of secrets the entry names (a private
	// key, an ID token): no sandboxed server may see them.
	secretFiles []string
	// account is whose account the server acts as: AccountOperator (one
	// sign-in for every chat) or AccountUser (each user's own).
	account     string
	disabled    bool
	autoApprove []string
	perUser     bool
	timeout     time.Duration
	sandbox     sandboxConfig
	// bounds are what a stdio server may take of the machine.
	bounds mcpgram.Bounds
	// protocolVersion pins the revision to speak, skipping server/discover.
	protocolVersion string
	err             error
}

// launchKey is what decides whether a change of the entry needs a restart:
// everything but disabled, autoApprove and perUser, which the hub applies
// in place.
func (c config) launchKey() string {
	b, _ := json.Marshal([]any{c.typ, c.command, c.args, c.env, c.cwd, c.url, c.headers, c.oauth, c.account, c.timeout, c.sandbox.key(), c.bounds, c.protocolVersion, errString(c.err)})
	return string(b)
}

// workDir is the folder a stdio server runs in: its cwd, or else the
// settings file's folder. Every relative path of its entry is relative to
// it, so that the same file works wherever mcpgram is started from.
func (c config) workDir() string {
	if c.cwd != "" {
		return c.cwd
	}
	return c.dir
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// entry is the JSON shape of one server entry. Fields the hub does not know
// stay in the file untouched because writes patch the raw JSON instead of
// re-encoding this struct.
type entry struct {
	Command     string            `json:"command"`
	Args        []string          `json:"args"`
	Env         map[string]string `json:"env"`
	Cwd         string            `json:"cwd"`
	Disabled    bool              `json:"disabled"`
	AutoApprove []string          `json:"autoApprove"`
	PerUser     bool              `json:"perUser"`
	Timeout     *float64          `json:"timeout"`
	Type        string            `json:"type"`
	URL         string            `json:"url"`
	Headers     map[string]string `json:"headers"`
	OAuth       *oauthEntry       `json:"oauth"`
	Sandbox     json.RawMessage   `json:"sandbox"`
	Limits      json.RawMessage   `json:"limits"`
	// ProtocolVersion pins the MCP revision for a server that cannot
	// negotiate it (one that ignores server/discover).
	ProtocolVersion string `json:"protocolVersion"`
}

// serverLists are the top-level keys whose objects hold server entries:
// mcpServers, as Cline and Claude Desktop write it, and servers, as VS
// Code's mcp.json does. A file may hold both; their entries are one list.
var serverLists = []string{"mcpServers", "servers"}

// loadSettings reads the settings file at path. Only a file that cannot be
// read or is not valid JSON of the right outer shape is an error; an unusable
// server entry becomes a config with err set, so the others still start.
// What the file holds that mcpgram does not read comes back as warnings.
func loadSettings(path string, lookupEnv func(string) (string, bool)) ([]config, []string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("read settings: %w", err)
	}
	return parseSettings(path, data, lookupEnv)
}

// bom is the UTF-8 byte order mark some Windows editors put first.
var bom = []byte("\xef\xbb\xbf")

func parseSettings(path string, data []byte, lookupEnv func(string) (string, bool)) ([]config, []string, error) {
	data = bytes.TrimPrefix(data, bom)
	if err := checkSyntax(path, data); err != nil {
		return nil, nil, err
	}
	top, err := jsonobj.Parse(data)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	var servers []jsonobj.Member
	for _, list := range serverLists {
		raw, _ := jsonobj.Get(top, list)
		entries, err := jsonobj.Parse(raw)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %s: %w", path, list, err)
		}
		servers = append(servers, entries...)
	}
	dir := filepath.Dir(path)
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	dupes := duplicates(data)
	var out []config
	for _, kv := range servers {
		if slices.ContainsFunc(out, func(c config) bool { return c.name == kv.Key }) {
			continue // in both lists: a duplicate, refused below
		}
		c := parseEntry(kv.Key, kv.Value, dir, lookupEnv)
		if err := CheckServerName(kv.Key); err != nil {
			c.err = err
		}
		if lines, ok := dupes[kv.Key]; ok {
			// Which of the entries was meant cannot be told, so none runs.
			c.err = fmt.Errorf("the name %q is given to %d servers (lines %s): rename or remove all but one", kv.Key, len(lines), joinInts(lines))
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b config) int { return strings.Compare(a.name, b.name) })
	return out, unread(path, data), nil
}

// duplicates maps each server name that the server lists hold more than
// once, together, to the lines where it stands.
func duplicates(data []byte) map[string][]int {
	top, _, err := jsonobj.Spans(data, 0)
	if err != nil {
		return nil
	}
	var members []jsonobj.Span
	for _, list := range serverLists {
		ms, ok := jsonobj.Last(top, list)
		if !ok || len(ms.Value) == 0 || ms.Value[0] != '{' {
			continue
		}
		m, _, err := jsonobj.Spans(data, ms.Start)
		if err != nil {
			return nil
		}
		members = append(members, m...)
	}
	count := make(map[string]int, len(members))
	for _, m := range members {
		count[m.Key]++
	}
	at := map[string][]int{}
	for _, m := range members {
		if count[m.Key] > 1 {
			line, _ := lines.Position(data, int64(m.KeyStart))
			at[m.Key] = append(at[m.Key], line)
		}
	}
	return at
}

func joinInts(n []int) string {
	s := make([]string, len(n))
	for i, v := range n {
		s[i] = strconv.Itoa(v)
	}
	return strings.Join(s, " and ")
}

// checkSyntax reports a JSON syntax error with the file's name, line and
// column, which is what a person editing the file needs.
func checkSyntax(path string, data []byte) error {
	var v any
	err := json.Unmarshal(data, &v)
	if err == nil {
		if _, ok := v.(map[string]any); !ok {
			return fmt.Errorf("%s:1:1: settings must be a JSON object", path)
		}
		return nil
	}
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		// Offset counts the bytes read, the last of which is at fault.
		line, col := lines.Position(data, syn.Offset-1)
		return fmt.Errorf("%s:%d:%d: %s", path, line, col, syn.Error())
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(err.Error(), "unexpected end of JSON input") {
		line, col := lines.Position(data, int64(len(data)))
		return fmt.Errorf("%s:%d:%d: unexpected end of file", path, line, col)
	}
	return fmt.Errorf("%s: %w", path, err)
}

// parseEntry reads the entry of server name. dir is the settings file's
// folder, where the server runs unless its cwd says otherwise.
func parseEntry(name string, raw json.RawMessage, dir string, lookupEnv func(string) (string, bool)) config {
	c := config{name: name, timeout: DefaultTimeout}
	// Read disabled and autoApprove on their own first, so that an entry
	// broken elsewhere still shows whether the user meant it to run.
	var loose map[string]json.RawMessage
	if err := json.Unmarshal(raw, &loose); err != nil {
		c.err = errors.New("server entry must be a JSON object")
		return c
	}
	_ = json.Unmarshal(loose["disabled"], &c.disabled)
	_ = json.Unmarshal(loose["autoApprove"], &c.autoApprove)

	var e entry
	if err := json.Unmarshal(raw, &e); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			c.err = fmt.Errorf("field %q: want %s, got %s", typeErr.Field, typeErr.Type, typeErr.Value)
		} else {
			c.err = fmt.Errorf("invalid entry: %w", err)
		}
		return c
	}
	home, _ := lookupEnv("HOME")
	c.err = c.read(e, dir, home, func(s string) (string, error) { return expandEnv(s, lookupEnv) })
	return c
}

// read fills c from a decoded entry, ${env:VAR} expanded with expand, and
// says what makes the entry unusable.
func (c *config) read(e entry, dir, home string, expand func(string) (string, error)) error {
	c.disabled = e.Disabled
	c.autoApprove = e.AutoApprove
	c.perUser = e.PerUser
	c.cwd = e.Cwd
	if e.Timeout != nil {
		if t := *e.Timeout; !(t >= minTimeout && t <= maxTimeout) {
			return fmt.Errorf("timeout must be a number of seconds from %g to %d, got %v", minTimeout, maxTimeout, t)
		}
		c.timeout = time.Duration(*e.Timeout * float64(time.Second))
	}
	if v := e.ProtocolVersion; v != "" {
		if !validProtocolVersion(v) {
			return fmt.Errorf("protocolVersion %q is not an MCP revision mcpgram knows (%s)", v, strings.Join(mcp.ValidProtocolVersions, ", "))
		}
		c.protocolVersion = v
	}
	typ, err := serverType(e)
	if err != nil {
		return err
	}
	c.typ = typ
	if c.typ == TypeStdio {
		if e.OAuth != nil {
			if a, err := readAccount(e.OAuth.Account); err != nil {
				return err
			} else if a == AccountUser {
				return fmt.Errorf("oauth.account %q: only a remote server (streamableHttp or sse) is signed in to, so a stdio server cannot act as each user's account", AccountUser)
			}
		}
		if err := c.readStdio(e, dir, expand); err != nil {
			return err
		}
		if c.sandbox, err = readSandbox(e.Sandbox, c.workDir(), home, expand); err != nil {
			return err
		}
		c.bounds, err = readBounds(e.Limits)
		return err
	}
	if len(e.Sandbox) > 0 && string(e.Sandbox) != "null" {
		return errors.New("sandbox: only a stdio server runs here to be sandboxed; a remote one runs elsewhere")
	}
	if len(e.Limits) > 0 && string(e.Limits) != "null" {
		return errors.New("limits: only a stdio server runs here to be bounded; a remote one runs elsewhere")
	}
	return c.readRemote(e, dir, expand)
}

// serverType is the type of server an entry describes, under its canonical
// name.
func serverType(e entry) (string, error) {
	switch e.Type {
	case "":
		if e.Command == "" && e.URL != "" {
			// Cline reads an entry with only a url as a legacy SSE server.
			return TypeSSE, nil
		}
		return TypeStdio, nil
	case TypeStdio, TypeStreamableHTTP, TypeSSE:
		return e.Type, nil
	case "http", "streamable-http", "streamableHTTP":
		return TypeStreamableHTTP, nil
	default:
		return "", fmt.Errorf("unknown type %q (want %q, %q or %q)", e.Type, TypeStdio, TypeStreamableHTTP, TypeSSE)
	}
}

// readStdio reads what starts a local server: its command, arguments,
// environment and working folder.
func (c *config) readStdio(e entry, dir string, expand func(string) (string, error)) error {
	if e.Command == "" {
		return errors.New("no command")
	}
	c.command = e.Command
	// A server runs in the settings file's folder, or in its cwd,
	// relative to that folder; a relative command is relative to where
	// it runs, as other hosts start it. So the same file works wherever
	// the bot is started from. Relative paths in args and env are the
	// server's to read, from the same folder.
	c.dir = dir
	if c.cwd != "" && !filepath.IsAbs(c.cwd) {
		c.cwd = filepath.Join(dir, c.cwd)
	}
	if strings.ContainsRune(c.command, '/') && !filepath.IsAbs(c.command) {
		c.command = filepath.Join(c.workDir(), c.command)
	}
	for _, a := range e.Args {
		arg, err := expand(a)
		if err != nil {
			return fmt.Errorf("args: %w", err)
		}
		c.args = append(c.args, arg)
	}
	var err error
	if c.env, err = expandMap(e.Env, expand); err != nil {
		return fmt.Errorf("env: %w", err)
	}
	return nil
}

// readRemote reads what reaches a remote server: its URL and headers,
// and how to sign in to it.
func (c *config) readRemote(e entry, dir string, expand func(string) (string, error)) error {
	if e.URL == "" {
		return fmt.Errorf("type %q needs a url", c.typ)
	}
	var err error
	if c.url, err = expand(e.URL); err != nil {
		return fmt.Errorf("url: %w", err)
	}
	if c.headers, err = expandMap(e.Headers, expand); err != nil {
		return fmt.Errorf("headers: %w", err)
	}
	return c.readOAuth(e.OAuth, dir, expand)
}

var (
	envRef   = regexp.MustCompile(`\$\{env:([^}]*)\}`)
	inputRef = regexp.MustCompile(`\$\{input:[^}]*\}`)
)

// expandEnv replaces each ${env:VAR} in s. An unset variable is an error
// naming it: starting a server with an empty token fails later and less
// clearly. So is VS Code's ${input:ID}, which asks the user in VS Code:
// there is no one to ask here, and sent as written it would fail later.
func expandEnv(s string, lookupEnv func(string) (string, bool)) (string, error) {
	if ref := inputRef.FindString(s); ref != "" {
		return "", fmt.Errorf("%s asks VS Code's user for a value, and mcpgram has no one to ask: set the value in the environment or .env as NAME and write ${env:NAME} instead", ref)
	}
	var missing []string
	out := envRef.ReplaceAllStringFunc(s, func(ref string) string {
		name := envRef.FindStringSubmatch(ref)[1]
		v, ok := lookupEnv(name)
		if !ok {
			missing = append(missing, name)
		}
		return v
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("environment variable %s is not set", strings.Join(missing, ", "))
	}
	return out, nil
}

func expandMap(m map[string]string, expand func(string) (string, error)) (map[string]string, error) {
	if len(m) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v, err := expand(m[k])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		out[k] = v
	}
	return out, nil
}
