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

	"github.com/mcpgram/mcpgram/internal/testenv"
	"github.com/mcpgram/mcpgram/mcp-servers/internal/mcptest"
)

const refusal = "Cannot store user preferences or personal information without explicit permission"

// startMemory runs the real binary on a database in dbPath.
func startMemory(t *testing.T, dbPath string) *client.Client {
	t.Helper()
	return mcptest.Start(t, testenv.Bundled(t, "mcp-memory"), "MEMORY_DB_PATH="+dbPath)
}

func as(user string) map[string]any { return map[string]any{"mcpgram/user_id": user} }

// call runs one memory operation for user and fails the test if the tool's
// error flag is not wantErr.
func call(t *testing.T, c *client.Client, user string, args map[string]any, wantErr bool) string {
	t.Helper()
	res := mcptest.Call(t, c, "memory", args, as(user))
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
	if !strings.Contains(tool.Description, "ask the user for explicit confirmation") ||
		!strings.Contains(tool.Description, "has_explicit_permission") {
		t.Errorf("description does not tell the model to ask first:\n%s", tool.Description)
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
}

func TestMemoryPermission(t *testing.T) {
	c := startMemory(t, filepath.Join(t.TempDir(), "memory.db"))
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
			got := call(t, c, "alice", args, tt.refused)
			if tt.refused && got != refusal {
				t.Errorf("refusal text = %q, want %q", got, refusal)
			}
		})
	}

	// Personal words hidden in the key or tags are caught too.
	got := call(t, c, "alice", map[string]any{"operation": "store", "content": "Blue", "key": "favourite colour"}, true)
	if got != refusal {
		t.Errorf("refusal text = %q, want %q", got, refusal)
	}

	// Nothing refused was stored.
	list := call(t, c, "alice", map[string]any{"operation": "list"}, false)
	if strings.Contains(list, "anna@example.org") || strings.Contains(list, "peanuts") || strings.Contains(list, "Blue") {
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
			if !res.IsError || !strings.Contains(res.Text, "mcpgram/user_id") {
				t.Errorf("got %+v, want an error naming mcpgram/user_id", res)
			}
		})
	}
	// A numeric id is read as its decimal text.
	mcptest.Call(t, c, "memory", map[string]any{"operation": "store", "key": "n", "content": "Numbers work"}, map[string]any{"mcpgram/user_id": 123456789})
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
				if res := mcptest.Call(t, c, "memory", args, as(user)); res.IsError {
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
