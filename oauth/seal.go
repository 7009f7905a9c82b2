package oauth

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"

	"github.com/mcpgram/mcpgram"
)

// A Sealer encrypts what the store keeps of sign-ins with AES-256-GCM
// (the standard library's: authenticated, and what Go's own crypto team
// keeps), under a key derived with HKDF-SHA256 from the operator's
// OAUTH_KEY. Each value is bound to where it is kept (its associated data:
// the table, server and user), so that a row copied to another place does
// not open there.
type Sealer struct {
	aead cipher.AEAD
}

// NewSealer derives the sealing key from secret, which must be at least
// MinKeyLength bytes; an empty secret gives ErrNoKey.
func NewSealer(secret string) (*Sealer, error) {
	if secret == "" {
		return nil, mcpgram.ErrNoKey
	}
	if len(secret) < mcpgram.MinOAuthKeyLength {
		return nil, fmt.Errorf("OAUTH_KEY is %d characters; it needs at least %d (such as the output of `openssl rand -base64 32`)", len(secret), mcpgram.MinOAuthKeyLength)
	}
	key, err := hkdf.Key(sha256.New, []byte(secret), nil, "mcpgram oauth v1", 32)
	if err != nil {
		return nil, fmt.Errorf("derive the sealing key: %w", err)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("sealing key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("sealing key: %w", err)
	}
	return &Sealer{aead: aead}, nil
}

// Seal encrypts plain for the place named by where.
func (s *Sealer) Seal(plain []byte, where string) []byte {
	nonce := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(plain)+s.aead.Overhead())
	_, _ = rand.Read(nonce) // crypto/rand.Read never fails (Go 1.24)
	return s.aead.Seal(nonce, nonce, plain, []byte(where))
}

// errOpen: a sealed value that does not open with this key and place: the
// key changed, or the value was tampered with or moved.
var errOpen = errors.New("a stored sign-in does not open with this OAUTH_KEY (was the key changed?): sign in again")

// Open decrypts what Seal sealed for where.
func (s *Sealer) Open(sealed []byte, where string) ([]byte, error) {
	n := s.aead.NonceSize()
	if len(sealed) < n+s.aead.Overhead() {
		return nil, errOpen
	}
	plain, err := s.aead.Open(nil, sealed[:n], sealed[n:], []byte(where))
	if err != nil {
		return nil, errOpen
	}
	return plain, nil
}
