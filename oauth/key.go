package oauth

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcpgram/mcpgram"
)

// KeyFileName is the file, beside the SQLite database, that keeps the key
// of an instance whose operator set no OAUTH_KEY (see Options.KeyFile).
const KeyFileName = "oauth.key"

// sealing returns the Sealer of sign-ins: the one of Options.Key, else
// the one of the key in Options.KeyFile, read the first time it is there
// (another process may make it meanwhile) and, when create is set and
// there is none yet, made. With no key at all it gives ErrNoKey.
func (m *Manager) sealing(create bool) (*Sealer, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.sealer != nil {
		return m.sealer, nil
	}
	if m.keyFile == "" {
		return nil, mcpgram.ErrNoKey
	}
	key, err := readKey(m.keyFile)
	made := false
	if errors.Is(err, fs.ErrNotExist) && create {
		key, made, err = makeKey(m.keyFile)
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, mcpgram.ErrNoKey
	case err != nil:
		return nil, fmt.Errorf("the key file of sign-ins: %w", err)
	}
	s, err := NewSealer(key)
	if err != nil {
		return nil, fmt.Errorf("the key file of sign-ins %s: %w", m.keyFile, err)
	}
	if made {
		m.log.Warn("no OAUTH_KEY is set: made a key for sign-ins in this file; keep it with the database, whose sign-ins do not open without it", "file", m.keyFile)
	}
	m.sealer = s
	return s, nil
}

// canSeal reports, as an error, whether a sign-in begun now could be
// kept: there is a key, or a key file to make one in (Begin makes it).
func (m *Manager) canSeal() error {
	if _, err := m.sealing(false); err != nil && (!errors.Is(err, mcpgram.ErrNoKey) || m.keyFile == "") {
		return err
	}
	return nil
}

// readKey returns the key kept in the file path.
func readKey(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// makeKey writes a new random key to the file path, readable by this
// user alone, unless the file is there already, and returns the key the
// file holds; made says it is the new one. The key is written whole to a
// file of its own (created exclusively, O_EXCL) and then linked into
// place, which fails if path exists: of two processes that race, one
// makes the file and both take its key, which no one reads half written.
func makeKey(path string) (key string, made bool, err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return "", false, err
	}
	raw := make([]byte, 32)
	_, _ = rand.Read(raw) // crypto/rand.Read never fails (Go 1.24)
	key = base64.RawURLEncoding.EncodeToString(raw)
	tmp, err := os.CreateTemp(dir, ".oauth.key-*") // O_EXCL, mode 0600
	if err != nil {
		return "", false, err
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	_, err = tmp.WriteString(key + "\n")
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", false, err
	}
	switch err := os.Link(tmp.Name(), path); {
	case errors.Is(err, fs.ErrExist):
		key, err := readKey(path)
		return key, false, err
	case err != nil:
		return "", false, fmt.Errorf("%w (set OAUTH_KEY instead)", err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // the new name survives a power cut
		_ = d.Close()
	}
	return key, true, nil
}
