package memory

import (
	"context"
	"crypto/rand"
	"database/sql"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// Limits that keep one user (or one runaway model) from filling the disk.
const (
	MaxContentLen = 8000 // characters of one memory
	MaxKeyLen     = 100
	MaxTags       = 20
	MaxTagLen     = 50
	MaxPerUser    = 10000
)

// Errors callers branch on.
var (
	ErrNotFound = errors.New("memory not found")
	ErrFull     = errors.New("memory is full")
)

// An InvalidError says what is wrong with a request, in words meant for
// whoever made it.
type InvalidError string

func (e InvalidError) Error() string { return string(e) }

func invalidf(format string, args ...any) error {
	return InvalidError(fmt.Sprintf(format, args...))
}

// A Memory is one stored fact of one user.
type Memory struct {
	Key       string
	Content   string
	Tags      []string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// A Store keeps memories in a SQLite file. It is safe for concurrent use.
type Store struct {
	db  *sql.DB
	now func() time.Time
}

//go:embed migrations/*.sql
var migrations embed.FS

// Open opens the database at path, creating its folder and file when they
// do not exist, and brings the schema up to date.
func Open(ctx context.Context, path string) (*Store, error) {
	if path == "" {
		return nil, errors.New("open memory store: empty path")
	}
	if strings.ContainsRune(path, '?') {
		// The driver would read the rest as DSN parameters.
		return nil, fmt.Errorf("open memory store %q: path must not contain '?'", path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, fmt.Errorf("open memory store: %w", err)
	}
	// Pragmas in the DSN apply to every pooled connection; busy_timeout and
	// immediate transactions keep a second writer from failing with BUSY.
	dsn := path + "?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open memory store %q: %w", path, err)
	}
	s := &Store{db: db, now: time.Now}
	if err := s.migrate(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open memory store %q: %w", path, err)
	}
	return s, nil
}

// Close closes the database.
func (s *Store) Close() error {
	return s.db.Close()
}

// migrate applies, each in its own transaction, the embedded migrations
// numbered above the database's user_version.
func (s *Store) migrate(ctx context.Context) error {
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return fmt.Errorf("list migrations: %w", err)
	}
	slices.Sort(names)
	var current int
	if err := s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&current); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	for _, name := range names {
		base := filepath.Base(name)
		num, _, _ := strings.Cut(base, "_")
		version, err := strconv.Atoi(num)
		if err != nil {
			return fmt.Errorf("migration %s: name must start with a number", base)
		}
		if version <= current {
			continue
		}
		body, err := migrations.ReadFile(name)
		if err != nil {
			return fmt.Errorf("migration %s: %w", base, err)
		}
		if err := s.inTx(ctx, func(tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, string(body)); err != nil {
				return err
			}
			// user_version is part of the database header, so it commits or
			// rolls back together with the migration.
			_, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", version))
			return err
		}); err != nil {
			return fmt.Errorf("migration %s: %w", base, err)
		}
		current = version
	}
	return nil
}

func (s *Store) inTx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// Put stores m for userID. A memory of that user with the same key is
// replaced; an empty key gets a generated one. It returns the key and
// whether an existing memory was replaced.
func (s *Store) Put(ctx context.Context, userID string, m Memory) (key string, replaced bool, err error) {
	if err := checkUser(userID); err != nil {
		return "", false, err
	}
	content := strings.TrimSpace(m.Content)
	if content == "" {
		return "", false, invalidf("content is empty")
	}
	if n := len([]rune(content)); n > MaxContentLen {
		return "", false, invalidf("content is %d characters long; the limit is %d", n, MaxContentLen)
	}
	key = strings.TrimSpace(m.Key)
	if n := len([]rune(key)); n > MaxKeyLen {
		return "", false, invalidf("key is %d characters long; the limit is %d", n, MaxKeyLen)
	}
	tags, err := NormalizeTags(m.Tags)
	if err != nil {
		return "", false, err
	}
	tagsJSON, err := json.Marshal(tags)
	if err != nil {
		return "", false, fmt.Errorf("encode tags: %w", err)
	}
	now := s.now().UTC().Format(time.RFC3339Nano)

	err = s.inTx(ctx, func(tx *sql.Tx) error {
		if key == "" {
			if key, err = freeKey(ctx, tx, userID); err != nil {
				return err
			}
		}
		var id int64
		switch err := tx.QueryRowContext(ctx,
			`SELECT id FROM memories WHERE user_id = ? AND key = ?`, userID, key).Scan(&id); {
		case err == nil:
			replaced = true
			_, err = tx.ExecContext(ctx,
				`UPDATE memories SET content = ?, tags = ?, updated_at = ? WHERE id = ?`,
				content, string(tagsJSON), now, id)
			return err
		case !errors.Is(err, sql.ErrNoRows):
			return err
		}
		var count int
		if err := tx.QueryRowContext(ctx,
			`SELECT count(*) FROM memories WHERE user_id = ?`, userID).Scan(&count); err != nil {
			return err
		}
		if count >= MaxPerUser {
			return fmt.Errorf("%w: %d memories stored; delete some first", ErrFull, count)
		}
		_, err := tx.ExecContext(ctx,
			`INSERT INTO memories (user_id, key, content, tags, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`,
			userID, key, content, string(tagsJSON), now, now)
		return err
	})
	if err != nil {
		return "", false, fmt.Errorf("store memory: %w", err)
	}
	return key, replaced, nil
}

// freeKey makes up a short key the user has not used yet.
func freeKey(ctx context.Context, tx *sql.Tx, userID string) (string, error) {
	for range 10 {
		key := "note-" + strings.ToLower(rand.Text()[:6])
		var exists bool
		if err := tx.QueryRowContext(ctx,
			`SELECT EXISTS (SELECT 1 FROM memories WHERE user_id = ? AND key = ?)`, userID, key).Scan(&exists); err != nil {
			return "", err
		}
		if !exists {
			return key, nil
		}
	}
	return "", errors.New("no free key found")
}

// Get returns userID's memory named key, or ErrNotFound.
func (s *Store) Get(ctx context.Context, userID, key string) (Memory, error) {
	if err := checkUser(userID); err != nil {
		return Memory{}, err
	}
	rows, err := s.db.QueryContext(ctx,
		`SELECT key, content, tags, created_at, updated_at FROM memories WHERE user_id = ? AND key = ?`,
		userID, strings.TrimSpace(key))
	if err != nil {
		return Memory{}, fmt.Errorf("retrieve memory: %w", err)
	}
	ms, err := scanMemories(rows)
	if err != nil {
		return Memory{}, fmt.Errorf("retrieve memory: %w", err)
	}
	if len(ms) == 0 {
		return Memory{}, ErrNotFound
	}
	return ms[0], nil
}

// Delete removes userID's memory named key, or returns ErrNotFound.
func (s *Store) Delete(ctx context.Context, userID, key string) error {
	if err := checkUser(userID); err != nil {
		return err
	}
	res, err := s.db.ExecContext(ctx,
		`DELETE FROM memories WHERE user_id = ? AND key = ?`, userID, strings.TrimSpace(key))
	if err != nil {
		return fmt.Errorf("delete memory: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("delete memory: %w", err)
	} else if n == 0 {
		return ErrNotFound
	}
	return nil
}

// List returns up to limit of userID's memories, most recently changed
// first, and how many there are in all. With tags, only memories carrying
// at least one of them count.
func (s *Store) List(ctx context.Context, userID string, tags []string, limit int) ([]Memory, int, error) {
	if err := checkUser(userID); err != nil {
		return nil, 0, err
	}
	filter, args, err := tagFilter(userID, tags)
	if err != nil {
		return nil, 0, err
	}
	var total int
	if err := s.db.QueryRowContext(ctx,
		`SELECT count(*) FROM memories m WHERE m.user_id = ?`+filter, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("list memories: %w", err)
	}
	rows, err := s.db.QueryContext(ctx,
		`SELECT m.key, m.content, m.tags, m.created_at, m.updated_at FROM memories m
		WHERE m.user_id = ?`+filter+` ORDER BY m.updated_at DESC, m.id DESC LIMIT ?`,
		append(args, limit)...)
	if err != nil {
		return nil, 0, fmt.Errorf("list memories: %w", err)
	}
	ms, err := scanMemories(rows)
	if err != nil {
		return nil, 0, fmt.Errorf("list memories: %w", err)
	}
	return ms, total, nil
}

// Search returns up to limit of userID's memories whose content or tags
// match words of query, best match first (BM25). With tags, only memories
// carrying at least one of them count.
func (s *Store) Search(ctx context.Context, userID, query string, tags []string, limit int) ([]Memory, error) {
	if err := checkUser(userID); err != nil {
		return nil, err
	}
	match := matchExpression(query)
	if match == "" {
		return nil, invalidf("the query has no words to search for")
	}
	filter, args, err := tagFilter(userID, tags)
	if err != nil {
		return nil, err
	}
	// Content weighs twice as much as tags: tags are short and shared by many
	// memories, so a hit there says less.
	rows, err := s.db.QueryContext(ctx,
		`SELECT m.key, m.content, m.tags, m.created_at, m.updated_at
		FROM memories_fts JOIN memories m ON m.id = memories_fts.rowid
		WHERE memories_fts MATCH ? AND m.user_id = ?`+filter+`
		ORDER BY bm25(memories_fts, 2.0, 1.0), m.updated_at DESC LIMIT ?`,
		slices.Concat([]any{match}, args, []any{limit})...)
	if err != nil {
		return nil, fmt.Errorf("search memories: %w", err)
	}
	ms, err := scanMemories(rows)
	if err != nil {
		return nil, fmt.Errorf("search memories: %w", err)
	}
	return ms, nil
}

// matchExpression turns free text into an FTS5 query that cannot be a
// syntax error: each word quoted, as a prefix, any of them may match; BM25
// then ranks memories matching more and rarer words first.
func matchExpression(query string) string {
	words := strings.FieldsFunc(query, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r)
	})
	const maxWords = 32
	if len(words) > maxWords {
		words = words[:maxWords]
	}
	terms := make([]string, len(words))
	for i, w := range words {
		terms[i] = `"` + w + `"*`
	}
	return strings.Join(terms, " OR ")
}

// tagFilter returns the SQL condition (on alias m) and arguments, starting
// with userID, for memories carrying any of tags.
func tagFilter(userID string, tags []string) (string, []any, error) {
	args := []any{userID}
	tags, err := NormalizeTags(tags)
	if err != nil || len(tags) == 0 {
		return "", args, err
	}
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(tags)), ", ")
	for _, t := range tags {
		args = append(args, t)
	}
	return ` AND EXISTS (SELECT 1 FROM json_each(m.tags) WHERE json_each.value IN (` + marks + `))`, args, nil
}

// NormalizeTags trims and lower-cases tags and drops empty and repeated
// ones, so "Food" and "food " are one tag. Too many or too long tags are an
// error.
func NormalizeTags(tags []string) ([]string, error) {
	out := make([]string, 0, len(tags))
	seen := make(map[string]bool, len(tags))
	for _, t := range tags {
		t = strings.ToLower(strings.Join(strings.Fields(t), " "))
		if t == "" || seen[t] {
			continue
		}
		if n := len([]rune(t)); n > MaxTagLen {
			return nil, invalidf("tag %q is %d characters long; the limit is %d", t, n, MaxTagLen)
		}
		seen[t] = true
		out = append(out, t)
	}
	if len(out) > MaxTags {
		return nil, invalidf("%d tags given; the limit is %d", len(out), MaxTags)
	}
	return out, nil
}

func checkUser(userID string) error {
	if strings.TrimSpace(userID) == "" {
		return invalidf("no user given")
	}
	return nil
}

func scanMemories(rows *sql.Rows) ([]Memory, error) {
	defer func() { _ = rows.Close() }()
	var ms []Memory
	for rows.Next() {
		var (
			m                   Memory
			tags                string
			created, updated    string
			errTags, errC, errU error
		)
		if err := rows.Scan(&m.Key, &m.Content, &tags, &created, &updated); err != nil {
			return nil, err
		}
		errTags = json.Unmarshal([]byte(tags), &m.Tags)
		m.CreatedAt, errC = time.Parse(time.RFC3339Nano, created)
		m.UpdatedAt, errU = time.Parse(time.RFC3339Nano, updated)
		if err := errors.Join(errTags, errC, errU); err != nil {
			return nil, fmt.Errorf("memory %q: %w", m.Key, err)
		}
		ms = append(ms, m)
	}
	return ms, rows.Err()
}
