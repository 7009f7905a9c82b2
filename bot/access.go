package bot

import (
	"context"
	"fmt"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram/dispatch"
)

// Who may use the bot, and how fast: ALLOWED_USER_IDS and ADMIN_USER_IDS,
// the per-user rate limit, and one polite refusal a minute for strangers.

func (b *Bot) isAdmin(id int64) bool { return b.admins[id] }

func (b *Bot) isAllowed(id int64) bool { return len(b.allowed) == 0 || b.allowed[id] || b.admins[id] }

// refusalInterval is the least time between two refusals to one stranger.
const refusalInterval = time.Minute

// refuse reports whether a user not allowed should be told so now: once
// per refusalInterval at most, then silence, so that strangers cannot
// spend the bot's Telegram budget (about one message a second per chat)
// by writing to it.
func (b *Bot) refuse(user int64) bool {
	now := time.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	if now.Sub(b.refusedSwept) >= refusalInterval {
		// Entries old enough to refuse again are no longer needed; dropping
		// them keeps a stream of new strangers from growing the map, and a
		// new map, of the strangers of the last minute alone, lets go of
		// the room a burst of them took (a map does not shrink).
		kept := make(map[int64]time.Time, len(b.refused)/2)
		for id, at := range b.refused {
			if now.Sub(at) < refusalInterval {
				kept[id] = at
			}
		}
		b.refused, b.refusedSwept = kept, now
	}
	if at, ok := b.refused[user]; ok && now.Sub(at) < refusalInterval {
		return false
	}
	b.refused[user] = now
	return true
}

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

// allowPress applies the per-user rate limit to a press, answering one
// over the limit with an alert so that its button does not keep spinning.
func (b *Bot) allowPress(ctx context.Context, cq *tgbotapi.CallbackQuery) bool {
	if ok, _ := b.allow(ctx, cq.From.ID); ok {
		return true
	}
	b.tg.AnswerCallback(ctx, cq.ID, fmt.Sprintf("You are pressing buttons faster than I can keep up with (at most %d a minute). Please wait a moment and try again.", b.cfg.RateLimitPerMinute), true)
	return false
}

// admitPress admits a press on a chat's settings: from an allowed user,
// within the rate limit. One refused is answered with an alert.
func (b *Bot) admitPress(ctx context.Context, cq *tgbotapi.CallbackQuery) bool {
	if !b.isAllowed(cq.From.ID) {
		b.tg.AnswerCallback(ctx, cq.ID, "Sorry, this bot is private.", true)
		return false
	}
	return b.allowPress(ctx, cq)
}
