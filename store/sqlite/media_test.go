package sqlite_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/store/sqlite"
)

// On SQLite an image is a file beside the database, under media/, named by
// its hash; pruning removes the file with its row, and sweeps files that
// no row names (a write that failed half way), leaving other files alone.
func TestMediaFiles(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	db, err := sqlite.Open(ctx, filepath.Join(dir, "mcpgram.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	img := []byte("GIF89a an image")
	ref, err := db.MediaPut(ctx, "image/gif", img)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "media", ref)
	if got, err := os.ReadFile(file); err != nil || string(got) != string(img) {
		t.Fatalf("the media file %s: %q, %v", file, got, err)
	}
	old := time.Now().Add(-48 * time.Hour)
	orphan := filepath.Join(dir, "media", store.MediaHash([]byte("orphan")))
	oldTemp := filepath.Join(dir, "media", ".tmp-123")
	newTemp := filepath.Join(dir, "media", ".tmp-456")
	foreign := filepath.Join(dir, "media", "README")
	for _, f := range []string{orphan, oldTemp, newTemp, foreign} {
		if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chtimes(oldTemp, old, old); err != nil {
		t.Fatal(err)
	}
	if n, err := db.MediaPrune(ctx, time.Now().Add(-time.Hour)); err != nil || n != 0 {
		t.Fatalf("MediaPrune = %d, %v; want 0", n, err)
	}
	exists := func(f string) bool {
		_, err := os.Stat(f)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
		return err == nil
	}
	if !exists(file) || exists(orphan) || exists(oldTemp) || !exists(newTemp) || !exists(foreign) {
		t.Errorf("after a prune of nothing: kept %v (want true), orphan %v, old temp %v (want false), new temp %v, foreign %v (want true)",
			exists(file), exists(orphan), exists(oldTemp), exists(newTemp), exists(foreign))
	}
	if n, err := db.MediaPrune(ctx, time.Now().Add(time.Minute)); err != nil || n != 1 {
		t.Fatalf("MediaPrune = %d, %v; want 1", n, err)
	}
	if exists(file) {
		t.Error("a pruned image's file is still there")
	}
}
