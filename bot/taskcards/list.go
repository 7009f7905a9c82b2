package taskcards

import (
	"context"
	"fmt"
	"strings"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram/bot/callback"
	"github.com/mcpgram/mcpgram/bot/render"
	"github.com/mcpgram/mcpgram/bot/telegram"
	"github.com/mcpgram/mcpgram/store"
)

// maxListed bounds /tasks: one message, a Stop button a task.
const maxListed = 20

// List answers /tasks at place at: the running tasks of conversation key,
// oldest first. Every member sees them all; a Stop button stops only a
// task of the presser's own, or any for an admin (Stop).
func (c *Cards) List(ctx context.Context, at telegram.Place, key string) {
	ts, err := c.Store.ChatTasks(ctx, key)
	var text string
	var markup any
	switch {
	case err != nil:
		c.Logger.Error("read a chat's tasks", "chat", at, "err", err)
		text = "Sorry, I could not read this chat's tasks. Please try again."
	case len(ts) == 0:
		text = "No task runs in this chat."
	default:
		text, markup = list(ts, time.Now())
	}
	if _, err := c.TG.SendLong(ctx, at, 0, text, markup); err != nil {
		c.Logger.Error("send the chat's tasks", "chat", at, "err", err)
	}
}

// list is the text of /tasks for ts, as of now, and a Stop button for
// each task it lists, numbered as the list is.
func list(ts []store.Task, now time.Time) (string, tgbotapi.InlineKeyboardMarkup) {
	var b strings.Builder
	fmt.Fprintf(&b, "⏳ <b>Running in this chat: %d</b>", len(ts))
	var rows [][]tgbotapi.InlineKeyboardButton
	for i, t := range ts {
		if i == maxListed {
			fmt.Fprintf(&b, "\n…and %d more.", len(ts)-i)
			break
		}
		fmt.Fprintf(&b, "\n%d. %s on %s, for %s", i+1, render.Escape(t.Tool), render.Escape(t.Server), ranFor(now.Sub(t.CreatedAt)))
		if t.StatusMessage != "" {
			b.WriteString(": <i>" + render.Escape(t.StatusMessage) + "</i>")
		}
		stop := callback.Data{Kind: callback.TaskStop, Task: t.ID}.String()
		rows = append(rows, tgbotapi.NewInlineKeyboardRow(tgbotapi.NewInlineKeyboardButtonData(fmt.Sprintf("⏹ Stop %d", i+1), stop)))
	}
	return b.String(), tgbotapi.NewInlineKeyboardMarkup(rows...)
}

// ranFor is how long a task has run, as people say it.
func ranFor(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", max(int(d.Seconds()), 0))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	}
	return fmt.Sprintf("%dh %dm", int(d.Hours()), int(d.Minutes())%60)
}
