package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpgram/mcpgram/store"
)

// mediaDir is the folder of the media files: beside the database file.
func (db *DB) mediaDir() string { return filepath.Join(filepath.Dir(db.path), "media") }

const upsertMediaSQL = `INSERT INTO media (hash, mime_type, size, stored_at) VALUES (?, ?, ?, ?)
	ON CONFLICT (hash) DO UPDATE SET stored_at = excluded.stored_at, mime_type = excluded.mime_type`

// MediaPut stores an image and returns its reference. Storing the same
// bytes again stores nothing new but restarts their retention.
//
// The file is written and synced under a temporary name first, then
// renamed to its hash in the same write transaction that records its row,
// so that MediaPrune, which deletes rows and files in one transaction
// too, never leaves a row without its file.
func (db *DB) MediaPut(ctx context.Context, mimeType string, data []byte) (string, error) {
	hash := store.MediaHash(data)
	dir := db.mediaDir()
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return "", fmt.Errorf("store media: %w", err)
	}
	tmp, err := writeTemp(dir, data)
	if err != nil {
		return "", fmt.Errorf("store media: %w", err)
	}
	defer func() { _ = os.Remove(tmp) }() // gone after the rename
	err = db.write(ctx, func(tx *sql.Tx) error {
		if err := os.Rename(tmp, filepath.Join(dir, hash)); err != nil {
			return err
		}
		if err := syncDir(dir); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, upsertMediaSQL, hash, mimeType, len(data), millis(db.now()))
		return err
	})
	if err != nil {
		return "", fmt.Errorf("store media %s: %w", hash, err)
	}
	return hash, nil
}

// writeTemp writes data to a new temporary file in dir, synced, and
// returns its path.
func writeTemp(dir string, data []byte) (string, error) {
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return "", err
	}
	_, werr := f.Write(data)
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		_ = os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer func() { _ = d.Close() }()
	return d.Sync()
}

// MediaGet returns the image ref names, or an error wrapping store.ErrNotFound
// when it is not kept (never stored, deleted by MediaPrune, or not a
// reference at all).
func (db *DB) MediaGet(ctx context.Context, ref string) (store.Media, error) {
	if !store.ValidMediaHash(ref) {
		return store.Media{}, fmt.Errorf("media %q: %w", ref, store.ErrNotFound)
	}
	m := store.Media{Hash: ref}
	var at int64
	err := db.reader.QueryRowContext(ctx, `SELECT mime_type, stored_at FROM media WHERE hash = ?`, ref).Scan(&m.MIMEType, &at)
	if err != nil {
		return store.Media{}, fmt.Errorf("media %s: %w", ref, notFound(err))
	}
	m.StoredAt = fromMillis(at)
	if m.Data, err = os.ReadFile(filepath.Join(db.mediaDir(), ref)); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			err = store.ErrNotFound
		}
		return store.Media{}, fmt.Errorf("media %s: %w", ref, err)
	}
	return m, nil
}

// MediaPrune deletes the images last stored before the given time, rows
// and files, and returns how many. Files without a row that are as old
// (left by a write that failed half way) go too.
func (db *DB) MediaPrune(ctx context.Context, before time.Time) (int64, error) {
	var n int64
	err := db.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM media WHERE stored_at < ?`, millis(before))
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("prune media: %w", err)
	}
	// The files go once the rows' deletion has committed: a file removed
	// for a row that stayed would lose the image.
	if err := db.sweepMedia(ctx, before); err != nil {
		return n, fmt.Errorf("prune media: %w", err)
	}
	return n, nil
}

// sweepMedia removes the media files that no row names: those whose rows
// MediaPrune deleted, and leftovers of failed writes. It holds the writer,
// so that no MediaPut renames a file into place between the read of the
// rows and the removal; a temporary file is removed only once older than
// before, as a MediaPut may still be writing it.
func (db *DB) sweepMedia(ctx context.Context, before time.Time) error {
	dir := db.mediaDir()
	return db.write(ctx, func(tx *sql.Tx) error {
		entries, err := os.ReadDir(dir)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT hash FROM media`)
		if err != nil {
			return err
		}
		kept := map[string]bool{}
		for rows.Next() {
			var h string
			if err := rows.Scan(&h); err != nil {
				_ = rows.Close()
				return err
			}
			kept[h] = true
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return err
		}
		for _, e := range entries {
			name := e.Name()
			switch {
			case store.ValidMediaHash(name) && !kept[name]:
			case strings.HasPrefix(name, ".tmp-"):
				if info, err := e.Info(); err != nil || !info.ModTime().Before(before) {
					continue
				}
			default:
				continue // kept, or not ours
			}
			if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
		return nil
	})
}
