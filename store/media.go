package store

import (
	"crypto/sha256"
	"encoding/hex"
	"time"
)

// A Media is an image a user sent, kept by reference: messages name it by
// its Hash (see Message.Media), and its bytes are stored once.
type Media struct {
	// Hash is the SHA-256 of Data in lowercase hex, the reference.
	Hash     string
	MIMEType string
	Data     []byte
	// StoredAt is when it was last stored; the retention limit counts
	// from it.
	StoredAt time.Time
}

// MediaHash returns the reference of data.
func MediaHash(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// ValidMediaHash reports whether ref is a reference MediaHash returns:
// 64 lowercase hex digits. The engines take no other, so a reference can
// never name a path outside a media folder.
func ValidMediaHash(ref string) bool {
	if len(ref) != sha256.Size*2 {
		return false
	}
	for _, c := range ref {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
