package apps

import "sync"

// kept holds, per conversation, what an MCP App gave the model
// for the conversation's next turn (ui/update-model-context): the newest
// only, given once. It is this process's memory, not the store's: an
// instance other than the one the app reached does not give it, and a
// restart forgets it (see docs/mcp.md).
type kept struct {
	mu sync.Mutex
	m  map[string]Message
}

// maxKept bounds the conversations whose app context is kept.
const maxKept = 10000

// Set keeps m, for its conversation, in place of what was kept; an
// empty one clears it.
func (c *kept) Set(m Message) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if m.Text == "" {
		delete(c.m, m.Key)
		return
	}
	if c.m == nil || len(c.m) >= maxKept {
		c.m = map[string]Message{} // a flood of chats: start over
	}
	c.m[m.Key] = m
}

// Take returns what is kept for conversation key, and forgets it.
func (c *kept) Take(key string) (Message, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m, ok := c.m[key]
	delete(c.m, key)
	return m, ok
}
