package bot

import (
	"context"
	"fmt"
	"sync"

	"github.com/mcpgram/mcpgram/bot/apps"
)

// appContexts keeps, per conversation, what an MCP App gave the model
// for the conversation's next turn (ui/update-model-context): the newest
// only, given once. It is this process's memory, not the store's: an
// instance other than the one the app reached does not give it, and a
// restart forgets it (see docs/mcp.md).
type appContexts struct {
	mu sync.Mutex
	m  map[string]apps.Message
}

// maxAppContexts bounds the conversations whose app context is kept.
const maxAppContexts = 10000

func (c *appContexts) set(m apps.Message) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if m.Text == "" {
		delete(c.m, m.Key)
		return
	}
	if c.m == nil || len(c.m) >= maxAppContexts {
		c.m = map[string]apps.Message{} // a flood of chats: start over
	}
	c.m[m.Key] = m
}

func (c *appContexts) take(key string) (apps.Message, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m, ok := c.m[key]
	delete(c.m, key)
	return m, ok
}

// SetAppContext keeps m, an app's context, for the next turn of its
// conversation, in place of what was kept there; an empty one clears it.
func (b *Bot) SetAppContext(ctx context.Context, m apps.Message) error {
	if !b.isAllowed(m.User) {
		return fmt.Errorf("an app's context from user %d, not allowed", m.User)
	}
	if len(m.Text) > apps.MaxContext {
		return fmt.Errorf("an app's context of %d bytes", len(m.Text))
	}
	b.appContext.set(m)
	return nil
}

// withAppContext returns text, the words of a turn in conversation key,
// after the context an app kept for it, if any, which it takes.
func (b *Bot) withAppContext(key, text string) string {
	m, ok := b.appContext.take(key)
	if !ok {
		return text
	}
	return "[Context from the app " + m.Title + ", given for this message:\n" + m.Text + "]\n\n" + text
}
