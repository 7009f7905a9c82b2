package bot

import (
	"context"
	"fmt"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram/dispatch"
)

// Who may use the bot, and how fast: ALLOWED_USER_IDS and ADMIN_USER_IDS,
// the per-user rate limit, and one polite refusal a minute for strangers
// (see package limits).

func (b *Bot) isAdmin(id int64) bool { return b.admins[id] }

func (b *Bot) isAllowed(id int64) bool { return len(b.allowed) == 0 || b.allowed[id] || b.admins[id] }

// allow applies the per-user rate limit; warn is true the first time a
// user is refused in a row.
//
// An update run again (its turn found the database away, see
// dispatch.RunAgain) was counted the first time: it is not counted again.
func (b *Bot) allow(ctx context.Context, user int64) (ok, warn bool) {
	if dispatch.Attempt(ctx) > 1 {
		return true, false
	}
	return b.users.Allow(ctx, user)
}

// allowOne applies the per-user rate limit where the refusal is the
// caller's to tell (an app's message, see apps.Chats).
func (b *Bot) allowOne(ctx context.Context, user int64) bool {
	ok, _ := b.allow(ctx, user)
	return ok
}

// allowPress applies the per-user rate limit to a press, answering one
// over the limit with an alert so that its button does not keep spinning.
func (b *Bot) allowPress(ctx context.Context, cq *tgbotapi.CallbackQuery) bool {
	if ok, _ := b.allow(ctx, cq.From.ID); ok {
		return true
	}
	b.tg.AnswerCallback(ctx, cq.ID, fmt.Sprintf("You are pressing buttons faster than I can keep up with (at most %d a minute). Please wait a moment and try again.", b.cfg.RateLimitPerMinute), true)
	return false
}

// admitPress admits a press: from an allowed user, within the rate
// limit. One refused is answered with an alert.
func (b *Bot) admitPress(ctx context.Context, cq *tgbotapi.CallbackQuery) bool {
	if !b.isAllowed(cq.From.ID) {
		b.tg.AnswerCallback(ctx, cq.ID, "Sorry, this bot is private.", true)
		return false
	}
	return b.allowPress(ctx, cq)
}
