package storetest

import (
	"context"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/mcpgram/mcpgram/store"
)

// OldMessages is what a database written before the migration that counts its bytes (SQLite 0013, PostgreSQL 0014) holds: a
// conversation of four messages, the third replaced, then a fifth; and
// another conversation of one. Both engines run it as it is.
const OldMessages = `INSERT INTO chats (id, created_at) VALUES ('c', 0);
INSERT INTO conversations (chat_id, created_at, ended_at) VALUES ('c', 0, 1);
INSERT INTO conversations (chat_id, created_at) VALUES ('c', 0);
INSERT INTO messages (conversation_id, role, content, created_at) VALUES (2, 'user', 'one', 0);
INSERT INTO messages (conversation_id, role, content, created_at) VALUES (1, 'user', 'other', 0);
INSERT INTO messages (conversation_id, role, content, created_at) VALUES (2, 'assistant', 'twotwo', 0);
INSERT INTO messages (conversation_id, role, content, created_at, replaced_at) VALUES (2, 'user', 'replaced', 0, 1);
INSERT INTO messages (conversation_id, role, content, created_at) VALUES (2, 'user', 'é', 0);`

// Before returns the migrations of fsys numbered below version.
func Before(t testing.TB, fsys fs.FS, version string) fstest.MapFS {
	t.Helper()
	out := fstest.MapFS{}
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".sql") && e.Name() < version {
			b, err := fs.ReadFile(fsys, e.Name())
			if err != nil {
				t.Fatal(err)
			}
			out[e.Name()] = &fstest.MapFile{Data: b}
		}
	}
	return out
}

// CheckUpgradedHistory checks db, migrated from a database holding
// OldMessages: the bytes of the history were counted for the messages
// already there, and go on from them.
func CheckUpgradedHistory(ctx context.Context, t *testing.T, db store.Store) {
	t.Helper()
	contents := func(bytes int) []string {
		msgs, err := db.RecentMessages(ctx, 2, bytes)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, m := range msgs {
			out = append(out, m.Content)
		}
		return out
	}
	if got, want := contents(8), []string{"twotwo", "é"}; !slices.Equal(got, want) {
		t.Errorf("after the upgrade, 8 bytes: %q, want %q", got, want)
	}
	if got, want := contents(9), []string{"one", "twotwo", "é"}; !slices.Equal(got, want) {
		t.Errorf("after the upgrade, 9 bytes: %q, want %q", got, want)
	}
	if _, err := db.AppendTurn(ctx, store.TurnWrite{ChatID: "c", Messages: []store.Message{{Role: "assistant", Content: "new"}}}); err != nil {
		t.Fatal(err)
	}
	if got, want := contents(5), []string{"é", "new"}; !slices.Equal(got, want) {
		t.Errorf("after a new message, 5 bytes: %q, want %q", got, want)
	}
}
