package apps

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ErrBadToken is returned for a URL token that is malformed, forged, or
// expired.
var ErrBadToken = errors.New("bad or expired app token")

// A Signer makes and checks the tokens of the apps' URLs: a token names
// a view and its user, and when it stops working, under an HMAC-SHA256
// whose key is derived from the bot's token, so every instance of the
// bot checks what any made, and the bot's token itself never travels.
type Signer struct {
	key []byte
}

// tokenKeyLabel separates the key of app tokens from any other use of
// the bot's token.
const tokenKeyLabel = "mcpgram mini app tokens v1"

// NewSigner returns the Signer whose key is derived from secret (the
// bot's token).
func NewSigner(secret string) *Signer {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(tokenKeyLabel))
	return &Signer{key: m.Sum(nil)}
}

// maxTokenLen bounds a token read from a URL.
const maxTokenLen = 256

// Sign returns the token of view for user, which works until expires:
// "view.user.expiry.mac", every part URL-safe.
func (s *Signer) Sign(view string, user int64, expires time.Time) string {
	body := view + "." + strconv.FormatInt(user, 10) + "." + strconv.FormatInt(expires.Unix(), 10)
	return body + "." + s.mac(body)
}

func (s *Signer) mac(body string) string {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(body))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// Verify returns the view and user token names, if s signed it and it
// has not expired at now; otherwise an error wrapping ErrBadToken.
func (s *Signer) Verify(token string, now time.Time) (view string, user int64, err error) {
	if len(token) > maxTokenLen {
		return "", 0, fmt.Errorf("token of %d bytes: %w", len(token), ErrBadToken)
	}
	i := strings.LastIndexByte(token, '.')
	if i < 0 || !hmac.Equal([]byte(token[i+1:]), []byte(s.mac(token[:i]))) {
		return "", 0, fmt.Errorf("token not signed by this bot: %w", ErrBadToken)
	}
	parts := strings.Split(token[:i], ".")
	if len(parts) != 3 {
		return "", 0, fmt.Errorf("token of %d parts: %w", len(parts), ErrBadToken)
	}
	user, uerr := strconv.ParseInt(parts[1], 10, 64)
	exp, eerr := strconv.ParseInt(parts[2], 10, 64)
	switch {
	case uerr != nil || eerr != nil || parts[0] == "":
		return "", 0, fmt.Errorf("token malformed: %w", ErrBadToken)
	case !now.Before(time.Unix(exp, 0)):
		return "", 0, fmt.Errorf("token expired at %s: %w", time.Unix(exp, 0).UTC().Format(time.RFC3339), ErrBadToken)
	}
	return parts[0], user, nil
}
