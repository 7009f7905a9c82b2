package memory_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram/mcp-servers/mcp-memory/internal/memory"
)

func openStore(t *testing.T, path string) *memory.Store {
	t.Helper()
	s, err := memory.Open(context.Background(), path)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func put(t *testing.T, s *memory.Store, user string, m memory.Memory) string {
	t.Helper()
	key, _, err := s.Put(context.Background(), user, m)
	if err != nil {
		t.Fatalf("put %+v: %v", m, err)
	}
	return key
}

func keys(ms []memory.Memory) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Key
	}
	return out
}

func TestStoreSearchRanksBestFirst(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, filepath.Join(t.TempDir(), "nested", "memory.db"))
	put(t, s, "u", memory.Memory{Key: "weak", Content: "The garden shed has a spare key for the bike lock and some old paint tins"})
	put(t, s, "u", memory.Memory{Key: "strong", Content: "Bike lock code is kept with the bike lock manual"})
	put(t, s, "u", memory.Memory{Key: "none", Content: "The printer needs A4 paper"})
	put(t, s, "u", memory.Memory{Key: "tagged", Content: "Spare tyre in the car boot", Tags: []string{"Bike"}})

	got, err := s.Search(ctx, "u", "bike lock", nil, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Key != "strong" || !slices.Contains(keys(got), "weak") || !slices.Contains(keys(got), "tagged") {
		t.Errorf("search bike lock = %v, want strong first, then weak and tagged", keys(got))
	}

	// Prefixes and diacritics: "caf" finds "Café".
	put(t, s, "u", memory.Memory{Key: "cafe", Content: "Team lunch at Café Central"})
	if got, _ := s.Search(ctx, "u", "cafe", nil, 10); !slices.Equal(keys(got), []string{"cafe"}) {
		t.Errorf("search cafe = %v, want [cafe]", keys(got))
	}

	// FTS5 syntax in a query is taken as words, never as an expression.
	for _, q := range []string{`"unbalanced`, `bike AND (`, `NOT bike`, `bike*`, `col:bike`, `^bike`} {
		if _, err := s.Search(ctx, "u", q, nil, 10); err != nil {
			t.Errorf("search %q: %v", q, err)
		}
	}
	var invalid memory.InvalidError
	if _, err := s.Search(ctx, "u", "?! --", nil, 10); !errors.As(err, &invalid) {
		t.Errorf("search without words: err = %v, want InvalidError", err)
	}
}

func TestStorePutReplacesByKeyAndFiltersTags(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, filepath.Join(t.TempDir(), "memory.db"))

	put(t, s, "u", memory.Memory{Key: "wifi", Content: "Guest wifi is Guest-1", Tags: []string{"Office", "office ", "net"}})
	key, replaced, err := s.Put(ctx, "u", memory.Memory{Key: " wifi ", Content: "Guest wifi is Guest-2", Tags: []string{"office"}})
	if err != nil || key != "wifi" || !replaced {
		t.Fatalf("put again = %q, %v, %v; want wifi, replaced", key, replaced, err)
	}
	m, err := s.Get(ctx, "u", "wifi")
	if err != nil {
		t.Fatal(err)
	}
	if m.Content != "Guest wifi is Guest-2" || !slices.Equal(m.Tags, []string{"office"}) {
		t.Errorf("after replace got %q %v", m.Content, m.Tags)
	}
	put(t, s, "u", memory.Memory{Key: "router", Content: "Old router sits in the basement"})
	put(t, s, "u", memory.Memory{Key: "router", Content: "New router sits in the attic"})
	if got, _ := s.Search(ctx, "u", "basement", nil, 10); len(got) != 0 {
		t.Errorf("search for replaced words = %v, want none", keys(got))
	}
	if got, _ := s.Search(ctx, "u", "attic", nil, 10); !slices.Equal(keys(got), []string{"router"}) {
		t.Errorf("search for new words = %v, want [router]", keys(got))
	}
	if err := s.Delete(ctx, "u", "router"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Search(ctx, "u", "attic", nil, 10); len(got) != 0 {
		t.Errorf("search after delete = %v, want none", keys(got))
	}

	generated := put(t, s, "u", memory.Memory{Content: "Printer is on floor 2", Tags: []string{"printer"}})
	if !strings.HasPrefix(generated, "note-") {
		t.Errorf("generated key %q, want note-…", generated)
	}

	ms, total, err := s.List(ctx, "u", []string{"PRINTER", "nothing"}, 10)
	if err != nil || total != 1 || !slices.Equal(keys(ms), []string{generated}) {
		t.Errorf("list by tag = %v (total %d, err %v), want [%s]", keys(ms), total, err, generated)
	}
	ms, total, err = s.List(ctx, "u", nil, 1)
	if err != nil || total != 2 || len(ms) != 1 || ms[0].Key != generated {
		t.Errorf("list limit 1 = %v (total %d, err %v), want the newest of 2", keys(ms), total, err)
	}
}

func TestStoreRejectsInvalid(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, filepath.Join(t.TempDir(), "memory.db"))
	tests := []struct {
		name string
		user string
		m    memory.Memory
	}{
		{"no user", " ", memory.Memory{Content: "x"}},
		{"empty content", "u", memory.Memory{Content: "  "}},
		{"long content", "u", memory.Memory{Content: strings.Repeat("a", memory.MaxContentLen+1)}},
		{"long key", "u", memory.Memory{Key: strings.Repeat("k", memory.MaxKeyLen+1), Content: "x"}},
		{"long tag", "u", memory.Memory{Content: "x", Tags: []string{strings.Repeat("t", memory.MaxTagLen+1)}}},
		{"many tags", "u", memory.Memory{Content: "x", Tags: strings.Split("a b c d e f g h i j k l m n o p q r s t u", " ")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var invalid memory.InvalidError
			if _, _, err := s.Put(ctx, tt.user, tt.m); !errors.As(err, &invalid) {
				t.Errorf("put: err = %v, want InvalidError", err)
			}
		})
	}
	if _, err := s.Get(ctx, "u", "missing"); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("get missing: err = %v, want ErrNotFound", err)
	}
	if err := s.Delete(ctx, "u", "missing"); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("delete missing: err = %v, want ErrNotFound", err)
	}
}

func TestStoreReopenKeepsDataAndSchema(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.db")
	s, err := memory.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	put(t, s, "u", memory.Memory{Key: "k", Content: "Standup is at 9:30"})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = openStore(t, path) // migrations must not run twice
	if m, err := s.Get(ctx, "u", "k"); err != nil || m.Content != "Standup is at 9:30" {
		t.Errorf("after reopen got %q, %v", m.Content, err)
	}
	if got, err := s.Search(ctx, "u", "standup", nil, 10); err != nil || len(got) != 1 {
		t.Errorf("search after reopen = %v, %v", keys(got), err)
	}
}

func TestOpenRejectsQuestionMark(t *testing.T) {
	if _, err := memory.Open(context.Background(), filepath.Join(t.TempDir(), "a?mode=ro")); err == nil {
		t.Error("open with '?' in path succeeded, want error")
	}
}
