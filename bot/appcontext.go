package bot

import (
	"context"
	"fmt"

	"github.com/mcpgram/mcpgram/bot/apps"
)

// SetAppContext keeps m, an app's context, for the next turn of its
// conversation, in place of what was kept there; an empty one clears it.
func (b *Bot) SetAppContext(ctx context.Context, m apps.Message) error {
	if !b.isAllowed(m.User) {
		return fmt.Errorf("an app's context from user %d, not allowed", m.User)
	}
	if len(m.Text) > apps.MaxContext {
		return fmt.Errorf("an app's context of %d bytes", len(m.Text))
	}
	b.appContext.Set(m)
	return nil
}

// withAppContext returns text, the words of a turn in conversation key,
// after the context an app kept for it, if any, which it takes.
func (b *Bot) withAppContext(key, text string) string {
	m, ok := b.appContext.Take(key)
	if !ok {
		return text
	}
	return "[Context from the app " + m.Title + ", given for this message:\n" + m.Text + "]\n\n" + text
}
