package bot

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/bot/render"
	"github.com/mcpgram/mcpgram/store"
)

// /usage: a user's own tokens today and this month, and their daily
// budget (TOKEN_BUDGET_PER_USER_DAY), which the agent enforces.

func (b *Bot) showUsage(ctx context.Context, chatID, user int64) {
	u, err := b.agent.Usage(ctx, strconv.FormatInt(user, 10))
	if err != nil {
		b.logger.Error("read token usage", "chat", chatID, "user", user, "err", err)
		b.say(ctx, chatID, "Sorry, I could not read your usage. Please try again.")
		return
	}
	b.say(ctx, chatID, usageText(u, b.isAdmin(user), time.Now()))
}

// usageText is /usage's answer, in short lines for a phone.
func usageText(u agent.Usage, admin bool, now time.Time) string {
	var sb strings.Builder
	sb.WriteString("<b>Your token usage</b>\n")
	fmt.Fprintf(&sb, "Today: %s\n", tokenLine(u.Today))
	fmt.Fprintf(&sb, "This month: %s\n", tokenLine(u.Month))
	switch {
	case u.Budget <= 0:
		sb.WriteString("No daily budget.")
	case admin:
		fmt.Fprintf(&sb, "Daily budget: %s tokens (admins are exempt).", render.Grouped(u.Budget))
	default:
		left := max(u.Budget-u.Today.Total(), 0)
		fmt.Fprintf(&sb, "Daily budget: %s tokens, %s left.\nResets at 00:00 UTC, in %s.",
			render.Grouped(u.Budget), render.Grouped(left), agent.HoursMinutes(u.Resets.Sub(now)))
	}
	if u.Month.Estimated() {
		sb.WriteString("\n<i>Some counts are estimates: the model's provider did not report them.</i>")
	}
	return sb.String()
}

// tokenLine is "1,234 tokens (1,000 in, 234 out)".
func tokenLine(t store.Tokens) string {
	if t.Total() == 0 {
		return "no tokens"
	}
	return fmt.Sprintf("%s tokens (%s in, %s out)", render.Grouped(t.Total()), render.Grouped(t.In), render.Grouped(t.Out))
}
