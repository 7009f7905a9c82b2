package main_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/client"

	"github.com/mcpgram/mcpgram/mcp-servers/internal/mcptest"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

const refusal = "Cannot store user preferences or personal information without explicit permission"

// startMemory runs the real binary on a database in dbPath.
func startMemory(t *testing.T, dbPath string) *client.Client {
	t.Helper()
	return mcptest.Start(t, testenv.Bundled(t, "mcp-memory"), "MEMORY_DB_PATH="+dbPath)
}

func as(user string) map[string]any { return map[string]any{"mcpgram/user_id": user} }

// consenting is the _meta of a call the user approved on its card, as
// mcpgram sends it.
func consenting(user string) map[string]any {
	return map[string]any{"mcpgram/user_id": user, "mcpgram/consent": true}
}

// call runs one memory operation for user and fails the test if the tool's
// error flag is not wantErr. Stores go as mcpgram sends them once the user
// agreed.
func call(t *testing.T, c *client.Client, user string, args map[string]any, wantErr bool) string {
	t.Helper()
	meta := as(user)
	if args["operation"] == "store" {
		meta = consenting(user)
	}
	res := mcptest.Call(t, c, "memory", args, meta)
	if res.IsError != wantErr {
		t.Fatalf("memory %v as %q: isError = %v, want %v; text: %s", args, user, res.IsError, wantErr, res.Text)
	}
	return res.Text
}

func TestMemoryTool(t *testing.T) {
	c := startMemory(t, filepath.Join(t.TempDir(), "memory.db"))
	tool, ok := mcptest.Tools(t, c)["memory"]
	if !ok {
		t.Fatal("no memory tool")
	}
	for _, want := range []string{"In mcpgram the user confirms each store", "MEMORY_USER", "has_explicit_permission"} {
		if !strings.Contains(tool.Description, want) {
			t.Errorf("description lacks %q:\n%s", want, tool.Description)
		}
	}
	for _, p := range []string{"operation", "content", "key", "query", "tags", "has_explicit_permission"} {
		if _, ok := tool.InputSchema.Properties[p]; !ok {
			t.Errorf("schema lacks %q", p)
		}
	}
	op, _ := tool.InputSchema.Properties["operation"].(map[string]any)
	if got, want := op["enum"], []any{"store", "retrieve", "search", "delete", "list"}; !slices.Equal(got.([]any), want) {
		t.Errorf("operation enum = %v, want %v", got, want)
	}
	if !slices.Contains(tool.InputSchema.Required, "operation") {
		t.Errorf("operation is not required: %v", tool.InputSchema.Required)
	}
	if tool.Meta == nil || fmt.Sprint(tool.Meta.AdditionalFields["mcpgram/consent_when"]) != "map[operation:[store]]" {
		t.Errorf("tool _meta = %+v, want consent_when for store", tool.Meta)
	}
	if tool.Meta == nil || tool.Meta.AdditionalFields["mcpgram/per_user"] != true {
		t.Errorf("tool _meta = %+v, want per_user: its results are the caller's alone", tool.Meta)
	}
}

// For a host that names its users, a store needs the host's word that the
// user agreed, whatever the content says and whatever the model claims;
// reading needs none.
func TestMemoryConsent(t *testing.T) {
	c := startMemory(t, filepath.Join(t.TempDir(), "memory.db"))
	tests := []struct {
		name    string
		meta    map[string]any
		args    map[string]any
		refused bool
	}{
		{"store without consent", as("alice"), map[string]any{"content": "The office printer is on floor 2"}, true},
		{"store, the model claims permission", as("alice"), map[string]any{"content": "Ich wohne in Berlin", "has_explicit_permission": true}, true},
		{"store, consent not true", map[string]any{"mcpgram/user_id": "alice", "mcpgram/consent": "true"}, map[string]any{"content": "Meeting notes live in the wiki"}, true},
		{"store, consent false", map[string]any{"mcpgram/user_id": "alice", "mcpgram/consent": false}, map[string]any{"content": "Meeting notes live in the wiki"}, true},
		{"store with consent", consenting("alice"), map[string]any{"content": "The user resides at 12 Baker Street, London and was born 1990-04-02"}, false},
		{"German with consent", consenting("alice"), map[string]any{"content": "Ich wohne in Berlin, meine Frau heißt Anna"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := map[string]any{"operation": "store"}
			for k, v := range tt.args {
				args[k] = v
			}
			res := mcptest.Call(t, c, "memory", args, tt.meta)
			if res.IsError != tt.refused {
				t.Fatalf("isError = %v, want %v: %s", res.IsError, tt.refused, res.Text)
			}
			if tt.refused && !strings.Contains(res.Text, "mcpgram/consent") {
				t.Errorf("refusal %q does not say what is missing", res.Text)
			}
		})
	}
	list := mcptest.Call(t, c, "memory", map[string]any{"operation": "list"}, as("alice"))
	if list.IsError || !strings.Contains(list.Text, "2 memories") || strings.Contains(list.Text, "printer") || strings.Contains(list.Text, "wiki") {
		t.Errorf("list without consent = %+v, want the two consented memories only", list)
	}
}

// MEMORY_USER lets a host that serves one person use the server: its
// requests name no user. The default never mixes users, and mcpgram, which
// always names its user, is never taken for the single user.
func TestMemorySingleUser(t *testing.T) {
	db := filepath.Join(t.TempDir(), "memory.db")
	bin := testenv.Bundled(t, "mcp-memory")
	c := mcptest.Start(t, bin, "MEMORY_DB_PATH="+db, "MEMORY_USER=me")
	if res := mcptest.Call(t, c, "memory", map[string]any{"operation": "store", "key": "tea", "content": "Green tea, no sugar", "has_explicit_permission": true}, nil); res.IsError {
		t.Fatalf("single-user store: %s", res.Text)
	}
	if res := mcptest.Call(t, c, "memory", map[string]any{"operation": "retrieve", "key": "tea"}, nil); res.IsError || !strings.Contains(res.Text, "Green tea") {
		t.Errorf("single-user retrieve = %+v", res)
	}
	// A host that names its user still gets that user, not the single one.
	if got := call(t, c, "alice", map[string]any{"operation": "list"}, false); !strings.Contains(got, "No memories") {
		t.Errorf("alice lists %q, want none of the single user's", got)
	}
	// mcpgram without a user is refused even where MEMORY_USER is set.
	m := mcptest.StartAs(t, "mcpgram", "", bin, "MEMORY_DB_PATH="+db, "MEMORY_USER=me")
	if res := mcptest.Call(t, m, "memory", map[string]any{"operation": "list"}, nil); !res.IsError || !strings.Contains(res.Text, "names no user") {
		t.Errorf("mcpgram without a user = %+v, want a refusal", res)
	}
}

// The single user's gate is the model's claim plus the detector: personal
// content without has_explicit_permission is refused, in the languages the
// detector reads, disguises included.
func TestMemoryPermission(t *testing.T) {
	c := mcptest.Start(t, testenv.Bundled(t, "mcp-memory"), "MEMORY_DB_PATH="+filepath.Join(t.TempDir(), "memory.db"), "MEMORY_USER=alice")
	tests := []struct {
		name       string
		content    string
		permission any // nil: not sent
		refused    bool
	}{
		{"preference without permission", "User prefers green tea", nil, true},
		{"first person without permission", "I'm allergic to peanuts", false, true},
		{"email without permission", "Contact: anna@example.org", nil, true},
		{"phone without permission", "Call +49 30 1234567", nil, true},
		{"address and birth date", "The user resides at 12 Baker Street, London and was born 1990-04-02", nil, true},
		{"German", "Ich wohne in Berlin, meine Frau heißt Anna", nil, true},
		{"zero-width split", "M\u200by wi\u200bfe is Anna", nil, true},
		{"neutral fact without permission", "The office printer is on floor 2", nil, false},
		{"preference with permission", "User prefers green tea", true, false},
		{"personal with permission as text", "My birthday is 3 May", "true", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := map[string]any{"operation": "store", "content": tt.content}
			if tt.permission != nil {
				args["has_explicit_permission"] = tt.permission
			}
			res := mcptest.Call(t, c, "memory", args, nil)
			if res.IsError != tt.refused {
				t.Fatalf("isError = %v, want %v: %s", res.IsError, tt.refused, res.Text)
			}
			if tt.refused && res.Text != refusal {
				t.Errorf("refusal text = %q, want %q", res.Text, refusal)
			}
		})
	}

	// Personal words hidden in the key or tags are caught too.
	if res := mcptest.Call(t, c, "memory", map[string]any{"operation": "store", "content": "Blue", "key": "favourite colour"}, nil); res.Text != refusal {
		t.Errorf("refusal text = %q, want %q", res.Text, refusal)
	}

	// Nothing refused was stored.
	list := mcptest.Call(t, c, "memory", map[string]any{"operation": "list"}, nil).Text
	if strings.Contains(list, "anna@example.org") || strings.Contains(list, "peanuts") || strings.Contains(list, "Blue") || strings.Contains(list, "Berlin") {
		t.Errorf("a refused memory was stored:\n%s", list)
	}
	if !strings.Contains(list, "3 memories") {
		t.Errorf("list = %q, want 3 memories", list)
	}
}

func TestMemoryOperations(t *testing.T) {
	c := startMemory(t, filepath.Join(t.TempDir(), "memory.db"))
	store := func(key, content string, tags ...string) {
		t.Helper()
		args := map[string]any{"operation": "store", "key": key, "content": content}
		if len(tags) > 0 {
			args["tags"] = tags
		}
		call(t, c, "u1", args, false)
	}
	store("deploy", "Production deploys happen on Fridays after the release review", "work")
	store("review", "The release review needs two approvals before a release", "work")
	store("plants", "The office plants need water on Mondays", "office")

	if got := call(t, c, "u1", map[string]any{"operation": "retrieve", "key": "deploy"}, false); !strings.Contains(got, "Production deploys happen on Fridays") || !strings.Contains(got, "tags: work") {
		t.Errorf("retrieve deploy = %q", got)
	}

	// Ranked: "release review" occurs twice in review, once in deploy.
	got := call(t, c, "u1", map[string]any{"operation": "search", "query": "release review"}, false)
	first, second := strings.Index(got, "[review]"), strings.Index(got, "[deploy]")
	if first < 0 || second < 0 || first > second || strings.Contains(got, "[plants]") {
		t.Errorf("search release review = %q, want review before deploy and no plants", got)
	}
	if got := call(t, c, "u1", map[string]any{"operation": "search", "query": "water", "tags": []string{"work"}}, false); !strings.Contains(got, "No memories match") {
		t.Errorf("search water in tag work = %q, want none", got)
	}

	// Tags given as one string are accepted.
	got = call(t, c, "u1", map[string]any{"operation": "list", "tags": "office, nothing"}, false)
	if !strings.Contains(got, "1 memory") || !strings.Contains(got, "[plants]") {
		t.Errorf("list tag office = %q", got)
	}

	// Same key replaces.
	got = call(t, c, "u1", map[string]any{"operation": "store", "key": "plants", "content": "The office plants need water on Tuesdays"}, false)
	if !strings.Contains(got, "Replaced") {
		t.Errorf("store existing key = %q, want Replaced", got)
	}
	if got := call(t, c, "u1", map[string]any{"operation": "retrieve", "key": "plants"}, false); !strings.Contains(got, "Tuesdays") {
		t.Errorf("retrieve after replace = %q", got)
	}

	if got := call(t, c, "u1", map[string]any{"operation": "delete", "key": "deploy"}, false); !strings.Contains(got, `Deleted memory "deploy"`) {
		t.Errorf("delete = %q", got)
	}
	call(t, c, "u1", map[string]any{"operation": "retrieve", "key": "deploy"}, true)
	call(t, c, "u1", map[string]any{"operation": "delete", "key": "deploy"}, true)
	if got := call(t, c, "u1", map[string]any{"operation": "list"}, false); !strings.Contains(got, "2 memories") || strings.Contains(got, "[deploy]") {
		t.Errorf("list after delete = %q", got)
	}

	// A store without key makes one up that retrieve accepts.
	got = call(t, c, "u1", map[string]any{"operation": "store", "content": "Wi-Fi guest network is called Lobby"}, false)
	start := strings.Index(got, `"`)
	key := strings.Trim(got[start:], `".`)
	if got := call(t, c, "u1", map[string]any{"operation": "retrieve", "key": key}, false); !strings.Contains(got, "Lobby") {
		t.Errorf("retrieve generated key %q = %q", key, got)
	}

	// Mistakes are explained as tool errors.
	for _, args := range []map[string]any{
		{"operation": "fly"},
		{},
		{"operation": "store"},
		{"operation": "retrieve"},
		{"operation": "delete"},
		{"operation": "search"},
		{"operation": "search", "query": "?!"},
		{"operation": "store", "content": "x", "tags": 7},
	} {
		if got := call(t, c, "u1", args, true); got == "" {
			t.Errorf("memory %v: empty error text", args)
		}
	}
}

func TestMemoryUserIsolation(t *testing.T) {
	c := startMemory(t, filepath.Join(t.TempDir(), "memory.db"))
	call(t, c, "alice", map[string]any{"operation": "store", "key": "code", "content": "Door code for the lab is 4711"}, false)
	call(t, c, "alice", map[string]any{"operation": "store", "key": "secret", "content": "The prototype is hidden in cabinet seven"}, false)
	call(t, c, "bob", map[string]any{"operation": "store", "key": "code", "content": "Bike shed code is 1234"}, false)

	// The same key names two memories.
	if got := call(t, c, "bob", map[string]any{"operation": "retrieve", "key": "code"}, false); !strings.Contains(got, "Bike shed") {
		t.Errorf("bob retrieves code = %q, want his own", got)
	}
	if got := call(t, c, "alice", map[string]any{"operation": "retrieve", "key": "code"}, false); !strings.Contains(got, "Door code") {
		t.Errorf("alice retrieves code = %q, want her own", got)
	}

	// Bob cannot see, find, read or delete Alice's memories.
	if got := call(t, c, "bob", map[string]any{"operation": "list"}, false); strings.Contains(got, "cabinet") || strings.Contains(got, "Door") || !strings.Contains(got, "1 memory") {
		t.Errorf("bob lists = %q", got)
	}
	if got := call(t, c, "bob", map[string]any{"operation": "search", "query": "prototype cabinet door lab"}, false); !strings.Contains(got, "No memories match") {
		t.Errorf("bob searches alice's words = %q", got)
	}
	call(t, c, "bob", map[string]any{"operation": "retrieve", "key": "secret"}, true)
	call(t, c, "bob", map[string]any{"operation": "delete", "key": "secret"}, true)
	call(t, c, "bob", map[string]any{"operation": "delete", "key": "code"}, false) // his own

	if got := call(t, c, "alice", map[string]any{"operation": "list"}, false); !strings.Contains(got, "2 memories") {
		t.Errorf("alice lists after bob's deletes = %q, want both of hers", got)
	}
	// User ids are compared exactly; the tool arguments cannot choose a user.
	if got := call(t, c, "Alice", map[string]any{"operation": "list", "user_id": "alice"}, false); !strings.Contains(got, "No memories") {
		t.Errorf("Alice (other case) lists = %q", got)
	}
}

func TestMemoryRefusesCallWithoutUser(t *testing.T) {
	c := startMemory(t, filepath.Join(t.TempDir(), "memory.db"))
	args := map[string]any{"operation": "list"}
	for name, meta := range map[string]map[string]any{
		"no _meta":        nil,
		"other keys only": {"progressToken": 1, "mcpgram/chat_id": "7"},
		"empty user":      {"mcpgram/user_id": "  "},
		"wrong type":      {"mcpgram/user_id": true},
	} {
		t.Run(name, func(t *testing.T) {
			res := mcptest.Call(t, c, "memory", args, meta)
			if !res.IsError || !strings.Contains(res.Text, "mcpgram/user_id") || !strings.Contains(res.Text, "MEMORY_USER") {
				t.Errorf("got %+v, want an error naming mcpgram/user_id and MEMORY_USER", res)
			}
		})
	}
	// A numeric id is read as its decimal text.
	mcptest.Call(t, c, "memory", map[string]any{"operation": "store", "key": "n", "content": "Numbers work"}, map[string]any{"mcpgram/user_id": 123456789, "mcpgram/consent": true})
	if got := call(t, c, "123456789", map[string]any{"operation": "retrieve", "key": "n"}, false); !strings.Contains(got, "Numbers work") {
		t.Errorf("numeric user = %q", got)
	}
}

func TestMemorySurvivesRestart(t *testing.T) {
	db := filepath.Join(t.TempDir(), "state", "memory.db")
	c := startMemory(t, db)
	call(t, c, "u", map[string]any{"operation": "store", "key": "k", "content": "Backups run at 02:00", "tags": []string{"ops"}}, false)
	if err := c.Close(); err != nil {
		t.Fatalf("first server did not exit cleanly: %v", err)
	}

	c = startMemory(t, db)
	if got := call(t, c, "u", map[string]any{"operation": "retrieve", "key": "k"}, false); !strings.Contains(got, "Backups run at 02:00") {
		t.Errorf("after restart retrieve = %q", got)
	}
	if got := call(t, c, "u", map[string]any{"operation": "search", "query": "backups"}, false); !strings.Contains(got, "[k]") {
		t.Errorf("after restart search = %q", got)
	}
}

// The stdio server runs tool calls on several workers at once; SQLite must
// take concurrent writers without "database is locked".
func TestMemoryConcurrentCalls(t *testing.T) {
	c := startMemory(t, filepath.Join(t.TempDir(), "memory.db"))
	const perUser = 15
	var wg sync.WaitGroup
	for _, user := range []string{"a", "b"} {
		for i := range perUser {
			wg.Go(func() {
				args := map[string]any{"operation": "store", "key": fmt.Sprintf("k%d", i), "content": fmt.Sprintf("Fact number %d about the build server", i)}
				if res := mcptest.Call(t, c, "memory", args, consenting(user)); res.IsError {
					t.Errorf("store %s/%d: %s", user, i, res.Text)
				}
				mcptest.Call(t, c, "memory", map[string]any{"operation": "search", "query": "build server"}, as(user))
			})
		}
	}
	wg.Wait()
	for _, user := range []string{"a", "b"} {
		if got := call(t, c, user, map[string]any{"operation": "list"}, false); !strings.HasPrefix(got, fmt.Sprintf("%d memories", perUser)) {
			t.Errorf("%s lists %q, want %d memories", user, firstLine(got), perUser)
		}
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func TestMemoryDefaultPath(t *testing.T) {
	dir := t.TempDir()
	c := mcptest.StartIn(t, dir, testenv.Bundled(t, "mcp-memory"))
	call(t, c, "u", map[string]any{"operation": "store", "content": "Lunch is at noon"}, false)
	if _, err := os.Stat(filepath.Join(dir, "data", "memory.db")); err != nil {
		t.Errorf("default database: %v", err)
	}
}
