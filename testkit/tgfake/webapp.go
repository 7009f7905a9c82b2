package tgfake

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// WebAppData is the init data Telegram hands a Mini App that user opens
// at authDate (Telegram.WebApp.initData, and tgWebAppData in the page's
// URL fragment), signed for the bot of botToken as Telegram signs it:
// the hex HMAC-SHA256, under the HMAC-SHA256 of the bot's token keyed
// with "WebAppData", of every field but hash, sorted, "key=value" joined
// by newlines.
func WebAppData(botToken string, user tgbotapi.User, authDate time.Time) string {
	u, _ := json.Marshal(map[string]any{"id": user.ID, "first_name": user.FirstName, "language_code": user.LanguageCode})
	values := url.Values{"auth_date": {strconv.FormatInt(authDate.Unix(), 10)}, "user": {string(u)}, "query_id": {"AAHfake"}}
	var lines []string
	for k, vs := range values {
		lines = append(lines, k+"="+vs[0])
	}
	slices.Sort(lines)
	secret := hmac.New(sha256.New, []byte("WebAppData"))
	secret.Write([]byte(botToken))
	m := hmac.New(sha256.New, secret.Sum(nil))
	m.Write([]byte(strings.Join(lines, "\n")))
	values.Set("hash", hex.EncodeToString(m.Sum(nil)))
	return values.Encode()
}
