package apps_test

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram/bot/apps"
	"github.com/mcpgram/mcpgram/testkit/tgfake"
)

// A token names its view and user until it expires, and nothing else
// passes: another bot's, an edited one, a truncated one, an expired one.
func TestToken(t *testing.T) {
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	s := apps.NewSigner(tgfake.Token)
	tok := s.Sign("v1", 42, now.Add(time.Hour))
	if strings.Contains(tok, tgfake.Token) || url.PathEscape(tok) != tok {
		t.Fatalf("token %q holds the bot token or is not URL-safe", tok)
	}
	view, user, err := s.Verify(tok, now)
	if err != nil || view != "v1" || user != 42 {
		t.Fatalf("Verify = %q, %d, %v; want v1, 42", view, user, err)
	}
	for name, bad := range map[string]string{
		"another bot's": apps.NewSigner("654321:OTHER").Sign("v1", 42, now.Add(time.Hour)),
		"another user":  strings.Replace(tok, ".42.", ".43.", 1),
		"another view":  strings.Replace(tok, "v1.", "v2.", 1),
		"no mac":        tok[:strings.LastIndexByte(tok, '.')],
		"empty":         "",
		"huge":          strings.Repeat("a", 300) + tok,
		"four parts":    s.Sign("v1.x", 42, now.Add(time.Hour)),
	} {
		if _, _, err := s.Verify(bad, now); !errors.Is(err, apps.ErrBadToken) {
			t.Errorf("Verify of %s token = %v, want ErrBadToken", name, err)
		}
	}
	if _, _, err := s.Verify(tok, now.Add(time.Hour)); !errors.Is(err, apps.ErrBadToken) {
		t.Errorf("Verify at expiry = %v, want ErrBadToken", err)
	}
}

// Init data passes when Telegram signed it for this bot within
// MaxInitDataAge, and names its user; forged, edited, another bot's or
// old data fails.
func TestCheckInitData(t *testing.T) {
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	alice := tgbotapi.User{ID: 2, FirstName: "Alice", LanguageCode: "de"}
	good := tgfake.WebAppData(tgfake.Token, alice, now.Add(-time.Minute))
	u, err := apps.CheckInitData(tgfake.Token, good, now)
	if err != nil || u.ID != 2 || u.LanguageCode != "de" {
		t.Fatalf("CheckInitData = %+v, %v; want Alice (2, de)", u, err)
	}
	edited := strings.Replace(good, "Alice", "Mallory", 1)
	for name, raw := range map[string]string{
		"another bot's": tgfake.WebAppData("654321:OTHER", alice, now),
		"edited":        edited,
		"old":           tgfake.WebAppData(tgfake.Token, alice, now.Add(-apps.MaxInitDataAge-time.Second)),
		"future":        tgfake.WebAppData(tgfake.Token, alice, now.Add(time.Hour)),
		"no hash":       good[:strings.Index(good, "hash=")] + "x=1",
		"doubled field": good + "&auth_date=1",
		"empty":         "",
		"huge":          good + "&pad=" + strings.Repeat("a", 9000),
		"no user":       tgfake.WebAppData(tgfake.Token, tgbotapi.User{}, now),
	} {
		if _, err := apps.CheckInitData(tgfake.Token, raw, now); !errors.Is(err, apps.ErrBadInitData) {
			t.Errorf("CheckInitData of %s data = %v, want ErrBadInitData", name, err)
		}
	}
}
