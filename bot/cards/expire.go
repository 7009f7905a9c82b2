package cards

import (
	"context"
	"time"

	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/bot/chats"
	"github.com/mcpgram/mcpgram/bot/reply"
)

// Expire denies through expire (the agent's) the approvals nobody
// answered in time, and shows each conversation's end where its card
// was, the card closed as expired. The turns it continues run in ctx.
func (d *Deck) Expire(ctx context.Context, now time.Time, expire func(ctx context.Context, now time.Time, emitFor func(chatID string) func(agent.Event)) error) error {
	var ended []*reply.Reply
	emitFor := func(key string) func(agent.Event) {
		// Where the card was, as a shared forum's key names no topic.
		at, ok := d.PlaceOf(key)
		if !ok {
			at, _ = chats.PlaceOf(key)
		}
		r := d.Replies.New(reply.Spec{Base: ctx, Ctx: ctx, At: at, Key: key, OnFirst: func() {
			d.CloseOpen(ctx, key, "approval", "⌛ <i>Expired: denied.</i>")
		}})
		ended = append(ended, r)
		return r.Emit
	}
	err := expire(ctx, now, emitFor)
	for _, r := range ended {
		r.Finish()
	}
	return err
}
