package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// MetaUserID is the _meta key under which the host names the user a call is
// made for. The host sets it, never the model, so a user cannot be forged
// through tool arguments.
const MetaUserID = "mcpgram/user_id"

// MetaConsent is the _meta key under which the host attests that the user
// approved this very call, having seen what it stores. MetaConsentWhen is
// the key, in the tool's definition, of the calls that need it; mcpgram
// reads it and asks the user before each such call.
const (
	MetaConsent     = "mcpgram/consent"
	MetaConsentWhen = "mcpgram/consent_when"
)

// MetaPerUser is the key, in the tool's definition, that declares the
// tool acts for one user: what it returns is theirs alone, and a host that
// serves a group keeps it from the other members (mcpgram does).
const MetaPerUser = "mcpgram/per_user"

// mcpgramClient is the name mcpgram gives in initialize. A client of that
// name always names its user, so the single-user setting never applies to
// it: a request of its without a user is a fault, not the one user.
const mcpgramClient = "mcpgram"

// ErrNoConsent is the text of the refusal to store, for a host that names
// its users, without the host's word that the user agreed.
const ErrNoConsent = "Refused: storing a memory needs the user's own consent, which the host attests with _meta \"mcpgram/consent\" after the user approved this very store. Nothing was stored."

// ErrNoPermission is the text of the refusal to store personal information
// without the user's explicit consent.
const ErrNoPermission = "Cannot store user preferences or personal information without explicit permission"

// How many memories one answer shows.
const (
	listLimit   = 50
	searchLimit = 10
)

const toolDescription = `Permanent memory that lasts across conversations, private to the current user.
Operations:
- store: save "content" (optionally under a "key", which replaces an earlier memory with that key, and with "tags").
- retrieve: read the memory named "key".
- search: find memories whose content or tags match the words of "query", best match first (optionally only those with one of "tags").
- delete: remove the memory named "key".
- list: show the most recent memories (optionally only those with one of "tags").
Store only what the user wants remembered. In mcpgram the user confirms each store on a card, so call store directly. Other hosts must start this server with MEMORY_USER naming the one user; there, ask the user first ("Shall I remember that you prefer tea?") and set has_explicit_permission to true only after they agree, or anything that looks personal is refused.`

// NewServer returns the MCP server with the one tool, "memory", backed by
// store.
//
// singleUser, when not empty, is the user of requests that name none, for
// hosts other than mcpgram that serve one person (Claude Desktop, Cline);
// empty, such requests are refused, so users are never mixed.
func NewServer(store *Store, logger *slog.Logger, version, singleUser string) *server.MCPServer {
	srv := server.NewMCPServer("mcp-memory", version,
		server.WithToolCapabilities(false),
		server.WithRecovery(),
		server.WithInstructions("Long-term memory for the current user. Store only what the user wants remembered."),
	)
	h := &handler{store: store, logger: logger, singleUser: strings.TrimSpace(singleUser)}
	srv.AddTool(Tool(), h.call)
	return srv
}

// Tool returns the definition of the "memory" tool.
func Tool() mcp.Tool {
	t := mcp.NewTool("memory",
		mcp.WithDescription(toolDescription),
		mcp.WithTitleAnnotation("Memory"),
		mcp.WithDestructiveHintAnnotation(true),
		mcp.WithOpenWorldHintAnnotation(false),
		mcp.WithString("operation", mcp.Required(),
			mcp.Enum("store", "retrieve", "search", "delete", "list"),
			mcp.Description("What to do.")),
		mcp.WithString("content", mcp.MaxLength(MaxContentLen),
			mcp.Description("store: the text to remember, written so it makes sense on its own later.")),
		mcp.WithString("key", mcp.MaxLength(MaxKeyLen),
			mcp.Description("store: optional short name (a new one is made up if absent; an existing one is replaced). retrieve, delete: the memory's name.")),
		mcp.WithString("query",
			mcp.Description("search: words to look for.")),
		mcp.WithArray("tags", mcp.WithStringItems(mcp.MaxLength(MaxTagLen)), mcp.MaxItems(MaxTags),
			mcp.Description("store: labels for the memory. list, search: show only memories with one of these labels.")),
		mcp.WithBoolean("has_explicit_permission", mcp.DefaultBool(false),
			mcp.Description("store, outside mcpgram: true only if the user explicitly agreed, in this conversation, to having this remembered.")),
	)
	t.Meta = &mcp.Meta{AdditionalFields: map[string]any{
		MetaConsentWhen: map[string]any{"operation": []any{"store"}},
		MetaPerUser:     true,
	}}
	return t
}

type handler struct {
	store      *Store
	logger     *slog.Logger
	singleUser string
}

// A caller is who a request is for, and how the server knows.
type caller struct {
	user string
	// attested: the host named the user, and so attests consent too
	// (MetaConsent); otherwise this is the single user of a host that
	// cannot attest anything, and the permission gate applies.
	attested bool
	consent  bool
}

// callerOf finds the user of req: the one the host names in _meta, or else
// the single user, unless the client is mcpgram, which always names one.
func (h *handler) callerOf(ctx context.Context, req mcp.CallToolRequest) (caller, string) {
	if user, ok := UserFromMeta(req.Params.Meta); ok {
		return caller{user: user, attested: true, consent: consentFromMeta(req.Params.Meta)}, ""
	}
	if h.singleUser != "" && clientName(ctx) != mcpgramClient {
		return caller{user: h.singleUser}, ""
	}
	return caller{}, fmt.Sprintf("Refused: this memory server keeps memories per user, and the request names no user. "+
		"A host that serves several people must set _meta %q; a host that serves one person (Claude Desktop, Cline) "+
		"can start the server with the environment variable MEMORY_USER set to a name for that person.", MetaUserID)
}

func clientName(ctx context.Context) string {
	if s, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo); ok {
		return s.GetClientInfo().Name
	}
	return ""
}

func consentFromMeta(meta *mcp.Meta) bool {
	if meta == nil {
		return false
	}
	v, ok := meta.AdditionalFields[MetaConsent].(bool)
	return ok && v
}

// arguments are the tool's arguments, read leniently: models sometimes send
// tags as one comma-separated string and booleans as strings.
type arguments struct {
	Operation  string   `json:"operation"`
	Content    string   `json:"content"`
	Key        string   `json:"key"`
	Query      string   `json:"query"`
	Tags       tagList  `json:"tags"`
	Permission flexBool `json:"has_explicit_permission"`
}

type tagList []string

func (t *tagList) UnmarshalJSON(b []byte) error {
	var list []string
	if err := json.Unmarshal(b, &list); err == nil {
		*t = list
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return errors.New("tags must be an array of strings")
	}
	*t = strings.Split(s, ",")
	return nil
}

type flexBool bool

func (f *flexBool) UnmarshalJSON(b []byte) error {
	var v bool
	if err := json.Unmarshal(b, &v); err == nil {
		*f = flexBool(v)
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		if v, err := strconv.ParseBool(strings.TrimSpace(s)); err == nil {
			*f = flexBool(v)
			return nil
		}
	}
	return errors.New("has_explicit_permission must be true or false")
}

func (h *handler) call(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	who, refusal := h.callerOf(ctx, req)
	if refusal != "" {
		return mcp.NewToolResultError(refusal), nil
	}
	user := who.user
	var args arguments
	if err := req.BindArguments(&args); err != nil {
		return mcp.NewToolResultError("Invalid arguments: " + err.Error()), nil
	}
	logger := h.logger.With("user", user, "operation", args.Operation)

	var (
		text string
		err  error
	)
	switch op := strings.ToLower(strings.TrimSpace(args.Operation)); op {
	case "store":
		text, err = h.storeMemory(ctx, who, args)
	case "retrieve":
		text, err = h.retrieve(ctx, user, args)
	case "search":
		text, err = h.search(ctx, user, args)
	case "delete":
		text, err = h.delete(ctx, user, args)
	case "list":
		text, err = h.list(ctx, user, args)
	case "":
		err = userError("operation is required: one of store, retrieve, search, delete, list")
	default:
		err = userError(fmt.Sprintf("unknown operation %q: use one of store, retrieve, search, delete, list", op))
	}
	if err != nil {
		var ue userError
		if errors.As(err, &ue) {
			return mcp.NewToolResultError(string(ue)), nil
		}
		logger.Error("memory operation failed", "err", err)
		return mcp.NewToolResultError("The memory store failed; please try again later."), nil
	}
	return mcp.NewToolResultText(text), nil
}

// A userError is a refusal or mistake explained to the model as is; any
// other error is logged and reported in general terms.
type userError string

func (e userError) Error() string { return string(e) }

// storeMemory stores only with consent. A host that names its users
// attests it for each store (mcpgram asks the user on a card), and no
// reading of the content stands in for that: no word list knows every
// language. The single user of another host has only the model's word,
// has_explicit_permission, and without it anything that looks personal
// is refused.
func (h *handler) storeMemory(ctx context.Context, who caller, args arguments) (string, error) {
	user := who.user
	content := strings.TrimSpace(args.Content)
	if content == "" {
		return "", userError("store needs content: the text to remember")
	}
	if who.attested && !who.consent {
		h.logger.Info("refused to store without the host's consent", "user", user)
		return "", userError(ErrNoConsent)
	}
	if !who.attested && !bool(args.Permission) {
		// Key and tags are stored and shown too, so they are checked as well.
		if _, found := DetectPersonal(content + "\n" + args.Key + "\n" + strings.Join(args.Tags, "\n")); found {
			// The match itself may be an address or a number: keep it out of the log.
			h.logger.Info("refused to store personal information without permission", "user", user)
			return "", userError(ErrNoPermission)
		}
	}
	key, replaced, err := h.store.Put(ctx, user, Memory{Key: args.Key, Content: content, Tags: args.Tags})
	if err != nil {
		return "", asUserError(err)
	}
	verb := "Stored"
	if replaced {
		verb = "Replaced"
	}
	return fmt.Sprintf("%s memory %q.", verb, key), nil
}

func (h *handler) retrieve(ctx context.Context, user string, args arguments) (string, error) {
	if strings.TrimSpace(args.Key) == "" {
		return "", userError("retrieve needs a key; use search to find memories by their words, or list to see keys")
	}
	m, err := h.store.Get(ctx, user, args.Key)
	if errors.Is(err, ErrNotFound) {
		return "", userError(fmt.Sprintf("No memory with key %q.", strings.TrimSpace(args.Key)))
	}
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("Memory %q%s, saved %s:\n%s", m.Key, tagSuffix(m.Tags), day(m.UpdatedAt), m.Content), nil
}

func (h *handler) search(ctx context.Context, user string, args arguments) (string, error) {
	query := strings.TrimSpace(args.Query)
	if query == "" {
		return "", userError("search needs a query: the words to look for")
	}
	ms, err := h.store.Search(ctx, user, query, args.Tags, searchLimit)
	if err != nil {
		return "", asUserError(err)
	}
	if len(ms) == 0 {
		return fmt.Sprintf("No memories match %q.", query), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s matching %q, best first:\n", count(len(ms)), query)
	for i, m := range ms {
		fmt.Fprintf(&b, "%d. [%s] %s%s\n", i+1, m.Key, m.Content, tagSuffix(m.Tags))
	}
	return strings.TrimRight(b.String(), "\n"), nil
}

func (h *handler) delete(ctx context.Context, user string, args arguments) (string, error) {
	key := strings.TrimSpace(args.Key)
	if key == "" {
		return "", userError("delete needs the key of the memory; use list or search to find it")
	}
	if err := h.store.Delete(ctx, user, key); errors.Is(err, ErrNotFound) {
		return "", userError(fmt.Sprintf("No memory with key %q.", key))
	} else if err != nil {
		return "", err
	}
	return fmt.Sprintf("Deleted memory %q.", key), nil
}

func (h *handler) list(ctx context.Context, user string, args arguments) (string, error) {
	ms, total, err := h.store.List(ctx, user, args.Tags, listLimit)
	if err != nil {
		return "", asUserError(err)
	}
	if total == 0 {
		if len(args.Tags) > 0 {
			return "No memories with those tags.", nil
		}
		return "No memories stored yet.", nil
	}
	var b strings.Builder
	if total > len(ms) {
		fmt.Fprintf(&b, "%s; the %d most recent:\n", count(total), len(ms))
	} else {
		fmt.Fprintf(&b, "%s, most recent first:\n", count(total))
	}
	for _, m := range ms {
		fmt.Fprintf(&b, "- [%s] %s%s (%s)\n", m.Key, m.Content, tagSuffix(m.Tags), day(m.UpdatedAt))
	}
	return strings.TrimRight(b.String(), "\n"), nil
}

// asUserError passes on the store's explanations, which are meant for the
// caller, and keeps database failures for the log.
func asUserError(err error) error {
	var invalid InvalidError
	if errors.As(err, &invalid) || errors.Is(err, ErrFull) {
		return userError(strings.TrimPrefix(err.Error(), "store memory: "))
	}
	return err
}

func count(n int) string {
	if n == 1 {
		return "1 memory"
	}
	return fmt.Sprintf("%d memories", n)
}

func tagSuffix(tags []string) string {
	if len(tags) == 0 {
		return ""
	}
	return " (tags: " + strings.Join(tags, ", ") + ")"
}

func day(t time.Time) string {
	return t.UTC().Format("2006-01-02")
}

// UserFromMeta returns the user named in a request's _meta under
// MetaUserID. Hosts send a string; a number is accepted too.
func UserFromMeta(meta *mcp.Meta) (string, bool) {
	if meta == nil {
		return "", false
	}
	var user string
	switch v := meta.AdditionalFields[MetaUserID].(type) {
	case string:
		user = v
	case float64:
		user = strconv.FormatFloat(v, 'f', -1, 64)
	case json.Number:
		user = v.String()
	}
	user = strings.TrimSpace(user)
	return user, user != ""
}
