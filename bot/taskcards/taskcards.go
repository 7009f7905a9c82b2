// Package taskcards is what a chat sees of the tool calls servers run in
// the background (package tasks): a task's card as it starts, its status
// as the poller finds it changed, its Stop button, /tasks, the chat's
// running tasks, and what a task waiting for input asks its user (on the
// form cards of any mid-call question). Handing a task's end to its
// conversation is a turn, which the bot runs; who may press what is
// checked here, when pressed.
package taskcards

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/bot/callback"
	"github.com/mcpgram/mcpgram/bot/chats"
	"github.com/mcpgram/mcpgram/bot/render"
	"github.com/mcpgram/mcpgram/bot/telegram"
	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/tasks"
)

// A Store keeps the tasks (see store.Tasks); *sqlite.DB and *postgres.DB
// are ones.
type Store interface {
	SetTaskCard(ctx context.Context, id, card int64) error
	GetTask(ctx context.Context, id int64) (store.Task, error)
	ChatTasks(ctx context.Context, key string) ([]store.Task, error)
}

// A Canceler cancels a task a server runs, for the user who started it;
// *hub.Hub is one.
type Canceler interface {
	CancelTask(ctx context.Context, caller mcpgram.Caller, server, id string) (*mcpgram.Task, error)
}

// A Follower follows a task until it ends; *tasks.Poller is one. Stop
// cancels a call it runs in the background in this process (see
// tasks.Local), and reports whether it runs it.
type Follower interface {
	Follow(ctx context.Context, id int64) error
	Stop(id int64) bool
}

// Cards shows tasks in their chats.
type Cards struct {
	TG    *telegram.Client
	Store Store
	Hub   Canceler
	// Poller follows the tasks shown; nil: none is followed.
	Poller  Follower
	IsAdmin func(userID int64) bool
	Logger  *slog.Logger
}

// Show tells the chat at place at that a call became task t, with a card
// replying to replyTo whose status Changed edits, and follows the task.
func (c *Cards) Show(ctx context.Context, at telegram.Place, replyTo int, t *agent.Task) {
	text, markup := card(t.ID, t.Tool, t.Server, t.StatusMessage)
	sent, err := c.TG.SendLong(ctx, at, replyTo, text, markup)
	if err != nil {
		c.Logger.Error("send a task's card", "chat", at, "err", err)
	}
	ctx = context.WithoutCancel(ctx)
	if err == nil {
		if err := c.Store.SetTaskCard(ctx, t.ID, int64(sent.MessageID)); err != nil {
			c.Logger.Warn("keep a task's card; its status shows no changes", "task", t.ID, "err", err)
		}
	}
	if c.Poller == nil {
		return
	}
	if err := c.Poller.Follow(ctx, t.ID); err != nil {
		c.Logger.Error("follow a task; an instance takes it over a lease after it was stored", "task", t.ID, "err", err)
	}
}

// card is the card of a running task: what runs, the server's word on it,
// and its Stop button.
func card(id int64, tool, server, status string) (string, tgbotapi.InlineKeyboardMarkup) {
	text := fmt.Sprintf("⏳ Working on it: %s on %s", render.Escape(tool), render.Escape(server))
	if status != "" {
		text += "\n<i>" + render.Escape(status) + "</i>"
	}
	text += "\nThe answer comes here when it is done; the chat is free meanwhile."
	stop := callback.Data{Kind: callback.TaskStop, Task: id}.String()
	return text, tgbotapi.NewInlineKeyboardMarkup(tgbotapi.NewInlineKeyboardRow(tgbotapi.NewInlineKeyboardButtonData("⏹ Stop", stop)))
}

// Changed shows the new status of task t, which the poller stored, on its
// card, if it has one.
func (c *Cards) Changed(ctx context.Context, t store.Task) {
	at, ok := chats.PlaceOf(t.ChatID)
	if t.CardID == 0 || !ok {
		return
	}
	text, markup := card(t.ID, t.Tool, t.Server, t.StatusMessage)
	if err := c.TG.EditHTML(ctx, at.Chat, int(t.CardID), text, &markup); err != nil {
		c.Logger.Debug("edit a task's card", "task", t.ID, "err", err)
	}
}

// Plain words of a task's Stop button.
const (
	msgTaskOver     = "This task is over."
	msgTaskNotYours = "Only the person who asked for it can stop it."
	msgTaskStopping = "Stopping it…"
	msgTaskRefused  = "The server did not stop it."
)

// Stop cancels the task of a Stop button pressed at place at, if the
// presser may: the user whose task it is, or an admin. The poller then
// finds it cancelled, and the chat is told as for any end.
func (c *Cards) Stop(ctx context.Context, cq *tgbotapi.CallbackQuery, at telegram.Place, data callback.Data) {
	t, err := c.Store.GetTask(ctx, data.Task)
	if errors.Is(err, store.ErrNotFound) || (err == nil && !t.Open()) {
		c.TG.AnswerCallback(ctx, cq.ID, msgTaskOver, false)
		return
	}
	if err != nil {
		c.Logger.Error("read a task to stop", "task", data.Task, "err", err)
		c.TG.AnswerCallback(ctx, cq.ID, msgTaskRefused, true)
		return
	}
	// The button's data is the presser's to forge: the task must be of
	// this chat, and the presser its user or an admin.
	if where, ok := chats.PlaceOf(t.ChatID); !ok || where.Chat != at.Chat {
		c.TG.AnswerCallback(ctx, cq.ID, "This button is no longer valid.", true)
		return
	}
	if strconv.FormatInt(cq.From.ID, 10) != t.UserID && !c.IsAdmin(cq.From.ID) {
		c.TG.AnswerCallback(ctx, cq.ID, msgTaskNotYours, true)
		return
	}
	if tasks.Local(t) {
		// A call going on in the background in this process: the
		// poller that runs it cancels it; one of a process gone is over.
		if c.Poller == nil || !c.Poller.Stop(t.ID) {
			c.TG.AnswerCallback(ctx, cq.ID, msgTaskOver, false)
			return
		}
	} else if _, err := c.Hub.CancelTask(ctx, mcpgram.Caller{UserID: t.UserID, ChatID: t.ChatID}, t.Server, t.Handle); err != nil {
		c.Logger.Warn("cancel a task", "task", t.ID, "server", t.Server, "err", err)
		c.TG.AnswerCallback(ctx, cq.ID, msgTaskRefused, true)
		return
	}
	c.Logger.Info("task cancelled at a press", "task", t.ID, "server", t.Server, "by", cq.From.ID)
	c.TG.AnswerCallback(ctx, cq.ID, msgTaskStopping, false)
	// The task's card says so, wherever the button was pressed: a /tasks
	// list stays as it is, unless the task has no card kept.
	shown := int(t.CardID)
	if shown == 0 {
		shown = cq.Message.MessageID
	}
	if err := c.TG.EditHTML(ctx, at.Chat, shown, "⏹ <i>Stopping: "+render.Escape(t.Tool)+" on "+render.Escape(t.Server)+".</i>", nil); err != nil {
		c.Logger.Debug("edit a task's card", "err", err)
	}
}
