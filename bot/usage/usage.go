// Package usage is /usage: a user's own tokens today and this month, and
// their daily budget (TOKEN_BUDGET_PER_USER_DAY), which the agent
// enforces. Everyone may read their own, and only their own.
package usage

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/bot/render"
	"github.com/mcpgram/mcpgram/bot/telegram"
	"github.com/mcpgram/mcpgram/store"
)

// An Agent tells a user's tokens; *agent.Agent is one. Users are named by
// their Telegram id in decimal.
type Agent interface {
	Usage(ctx context.Context, userID string) (agent.Usage, error)
}

// Telegram is what the screen sends through; *telegram.Client is one.
type Telegram interface {
	SendLong(ctx context.Context, to telegram.Place, replyTo int, html string, markup any) (tgbotapi.Message, error)
}

// Options are a Screen's optional settings.
type Options struct {
	Logger *slog.Logger
}

// A Screen answers /usage.
type Screen struct {
	agent  Agent
	tg     Telegram
	logger *slog.Logger
}

// New returns a Screen reading the users' tokens from a and answering
// through tg.
func New(a Agent, tg Telegram, opts Options) *Screen {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Screen{agent: a, tg: tg, logger: opts.Logger}
}

// Show tells user, in place to, their own usage; admin says they are an
// admin of the bot, whom the budget does not bind.
func (sc *Screen) Show(ctx context.Context, to telegram.Place, user int64, admin bool) {
	html := "Sorry, I could not read your usage. Please try again."
	if u, err := sc.agent.Usage(ctx, strconv.FormatInt(user, 10)); err != nil {
		sc.logger.Error("read token usage", "chat", to, "user", user, "err", err)
	} else {
		html = usageText(u, admin, time.Now())
	}
	if _, err := sc.tg.SendLong(ctx, to, 0, html, nil); err != nil {
		sc.logger.Error("send /usage", "chat", to, "err", err)
	}
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
