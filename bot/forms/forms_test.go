package forms_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/bot/forms"
	"github.com/mcpgram/mcpgram/bot/telegram"
)

// A telegramEdits sends a card as message 7, and keeps the texts of its
// edits.
type telegramEdits struct {
	forms.Telegram
	mu    sync.Mutex
	edits []string
}

func (e *telegramEdits) SendHTML(context.Context, telegram.Place, int, string, any) (tgbotapi.Message, error) {
	return tgbotapi.Message{MessageID: 7}, nil
}

func (e *telegramEdits) EditHTML(_ context.Context, _ int64, _ int, html string, _ *tgbotapi.InlineKeyboardMarkup) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.edits = append(e.edits, html)
	return nil
}

// Two inputs of one form handled at once may reach the card in either
// order: the view of the later version stays on it, and an older one
// that comes after it changes nothing; a closed form is always shown,
// also by a call whose context has ended.
func TestCardShowsTheLatestView(t *testing.T) {
	tg := &telegramEdits{}
	c := forms.New(nil, tg, forms.Options{})
	view := func(version int64, message, outcome string) *agent.Form {
		return &agent.Form{ID: 1, Mode: mcpgram.ElicitURL, URL: "https://example.com/x", Message: message, Version: version, Outcome: outcome}
	}
	c.Show(t.Context(), telegram.Place{Chat: 42}, "42", 42, view(0, "first", ""))
	c.Update(t.Context(), 42, 0, view(2, "the date taken", ""))
	c.Update(t.Context(), 42, 0, view(1, "not a date, try again", ""))
	c.Update(t.Context(), 42, 0, view(2, "the date taken, again", ""))
	ended, cancel := context.WithCancel(t.Context())
	cancel() // as a stopped call's
	c.Update(ended, 42, 0, view(1, "declined", agent.FormDeclined))
	got := strings.Join(tg.edits, "\n---\n")
	if len(tg.edits) != 3 || strings.Contains(got, "not a date") || !strings.Contains(tg.edits[0], "the date taken") || !strings.Contains(tg.edits[2], "declined") {
		t.Errorf("the card's edits:\n%s\nwant version 2, version 2 again, and the closed form; never version 1 open", got)
	}
}
