package apps

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ErrBadInitData is returned for Mini App init data that Telegram did not
// sign for this bot, or signed too long ago.
var ErrBadInitData = errors.New("bad or expired Telegram init data")

// MaxInitDataAge is how old init data may be (its auth_date): a Mini App
// opened longer ago must be opened again from its button. Telegram signs
// the data when the user opens the app, so a day covers a long session
// and bounds what a leaked copy is worth.
const MaxInitDataAge = 24 * time.Hour

// maxInitData bounds the init data read from a request.
const maxInitData = 8 << 10

// A WebAppUser is the user init data names.
type WebAppUser struct {
	ID           int64  `json:"id"`
	FirstName    string `json:"first_name"`
	LanguageCode string `json:"language_code"`
}

// CheckInitData checks raw, the query string Telegram gives a Mini App
// (Telegram.WebApp.initData, or tgWebAppData in the URL's fragment), as
// Telegram documents: the data-check string is every field but hash,
// sorted by key, "key=value" joined by newlines; the secret key is the
// HMAC-SHA256 of the bot's token keyed with "WebAppData"; hash is the hex
// HMAC-SHA256 of the data-check string under that key. The data must be
// at most MaxInitDataAge old at now. It returns the user the data names.
func CheckInitData(botToken, raw string, now time.Time) (WebAppUser, error) {
	if raw == "" || len(raw) > maxInitData {
		return WebAppUser{}, fmt.Errorf("init data of %d bytes: %w", len(raw), ErrBadInitData)
	}
	values, err := url.ParseQuery(raw)
	if err != nil {
		return WebAppUser{}, fmt.Errorf("init data: %v: %w", err, ErrBadInitData)
	}
	hash := values.Get("hash")
	var lines []string
	for k, vs := range values {
		if len(vs) != 1 {
			return WebAppUser{}, fmt.Errorf("init data field %q given %d times: %w", k, len(vs), ErrBadInitData)
		}
		if k != "hash" {
			lines = append(lines, k+"="+vs[0])
		}
	}
	slices.Sort(lines)
	if !hmac.Equal([]byte(hash), []byte(initDataHash(botToken, strings.Join(lines, "\n")))) {
		return WebAppUser{}, fmt.Errorf("init data not signed for this bot: %w", ErrBadInitData)
	}
	at, err := strconv.ParseInt(values.Get("auth_date"), 10, 64)
	if err != nil {
		return WebAppUser{}, fmt.Errorf("init data without auth_date: %w", ErrBadInitData)
	}
	if age := now.Sub(time.Unix(at, 0)); age > MaxInitDataAge || age < -time.Minute {
		return WebAppUser{}, fmt.Errorf("init data signed %s ago: %w", age.Round(time.Second), ErrBadInitData)
	}
	var u WebAppUser
	if err := json.Unmarshal([]byte(values.Get("user")), &u); err != nil || u.ID == 0 {
		return WebAppUser{}, fmt.Errorf("init data without a user: %w", ErrBadInitData)
	}
	return u, nil
}

// initDataHash is the hex hash Telegram puts in init data whose
// data-check string is check.
func initDataHash(botToken, check string) string {
	secret := hmac.New(sha256.New, []byte("WebAppData"))
	secret.Write([]byte(botToken))
	m := hmac.New(sha256.New, secret.Sum(nil))
	m.Write([]byte(check))
	return hex.EncodeToString(m.Sum(nil))
}
