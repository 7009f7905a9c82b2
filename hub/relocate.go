package hub

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// A Move is a server's file that Relocate moved out of the bot's data
// folder.
type Move struct {
	Server, From, To string
}

// sidecars are what SQLite keeps beside a database, moved with it.
var sidecars = []string{"", "-wal", "-shm", "-journal"}

// safeFolder is a server name that may name a folder as it is.
var safeFolder = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$`)

// Relocate moves out of folder, the bot's data folder, each file that an
// env value of a stdio entry of the settings file at path names right in
// it (the memory server's ./data/memory.db, as mcpgram shipped it before
// servers had folders of their own), with the journals SQLite keeps
// beside it, into a folder of that server's own there (folder/memory/),
// and points the entry at its new place. Such a server would now be
// refused: it could write beside the bot's database. Only a file that is
// there is moved (an entry that names one yet to be is refused, naming
// the fix), never one of hidden, the bot's own, and only when its entry
// can be written; what cannot be moved is left for the entry's refusal to
// explain.
func Relocate(path, folder string, hidden []string, lookupEnv func(string) (string, bool)) ([]Move, error) {
	cfgs, _, err := loadSettings(path, lookupEnv)
	if err != nil {
		return nil, err
	}
	folder = filepath.Clean(folder)
	var moves []Move
	var errs []error
	for _, c := range cfgs {
		if c.typ != TypeStdio || c.err != nil || !safeFolder.MatchString(c.name) {
			continue
		}
		v := view{cwd: c.workDir()}
		for _, k := range slices.Sorted(maps.Keys(c.env)) {
			p, ok := v.pathIn(c.env[k])
			if !ok || filepath.Dir(p) != folder || slices.Contains(hidden, p) {
				continue
			}
			if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() {
				continue // nothing of an old install to move
			}
			m, err := relocate(path, c.name, k, p)
			if err != nil {
				errs = append(errs, fmt.Errorf("move the file of server %q out of %s: %w", c.name, folder, err))
				continue
			}
			moves = append(moves, m)
		}
	}
	return moves, errors.Join(errs...)
}

// relocate moves the file p, which env value k of server names, into a
// folder of the server's own beside it, and patches the value.
func relocate(path, server, k, p string) (Move, error) {
	m := Move{Server: server, From: p, To: filepath.Join(filepath.Dir(p), server, filepath.Base(p))}
	if err := os.MkdirAll(filepath.Dir(m.To), 0o750); err != nil {
		return m, err
	}
	var moved []string
	for _, s := range sidecars {
		if err := os.Rename(m.From+s, m.To+s); err == nil {
			moved = append(moved, s)
		} else if !errors.Is(err, os.ErrNotExist) {
			undo(m, moved)
			return m, err
		}
	}
	err := patchServer(path, server, "env", func(old json.RawMessage) (json.RawMessage, error) {
		var env map[string]string
		if err := json.Unmarshal(old, &env); err != nil {
			return nil, err
		}
		raw := env[k]
		base := filepath.Base(p)
		if !strings.HasSuffix(raw, base) || strings.Contains(raw, "${") {
			return nil, fmt.Errorf("env %s = %q: write it as %s", k, raw, m.To)
		}
		env[k] = strings.TrimSuffix(raw, base) + server + "/" + base
		return envObject(env), nil
	})
	if err != nil {
		undo(m, moved)
		return m, err
	}
	return m, nil
}

// envObject is env as a JSON object on one line, as people write a short
// one: {"A": "1", "B": "2"}.
func envObject(env map[string]string) json.RawMessage {
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range slices.Sorted(maps.Keys(env)) {
		if i > 0 {
			b.WriteString(", ")
		}
		key, _ := json.Marshal(k)
		value, _ := json.Marshal(env[k])
		b.Write(key)
		b.WriteString(": ")
		b.Write(value)
	}
	b.WriteByte('}')
	return json.RawMessage(b.String())
}

// undo moves back what relocate moved of m.
func undo(m Move, moved []string) {
	for _, s := range moved {
		_ = os.Rename(m.To+s, m.From+s)
	}
}
