package settings

import (
	"context"
	"fmt"
	"strings"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/bot/callback"
	"github.com/mcpgram/mcpgram/bot/render"
	"github.com/mcpgram/mcpgram/bot/telegram"
)

// /model: which of the operator's model profiles answers this chat, with
// a button each to switch. In a group only its administrators (or the
// bot's admins) may press them, checked at the press; in a private chat,
// its user.

// ShowModel answers /model, sent at place at, for the conversation key.
func (sc *Screen) ShowModel(ctx context.Context, at telegram.Place, key string) {
	html, kb, err := sc.modelView(ctx, at.Chat, key)
	if err != nil {
		sc.logger.Error("read the chat's model", "chat", at, "err", err)
		sc.say(ctx, at, "Sorry, I could not read this chat's model. Please try again.")
		return
	}
	sc.send(ctx, at, html, kb, "/model")
}

// modelView says which profile answers the conversation key of chatID,
// with a button per profile when there is a choice.
func (sc *Screen) modelView(ctx context.Context, chatID int64, key string) (string, tgbotapi.InlineKeyboardMarkup, error) {
	var kb tgbotapi.InlineKeyboardMarkup
	cur, err := sc.agent.ChatProfile(ctx, key)
	if err != nil {
		return "", kb, err
	}
	profiles := sc.agent.Profiles()
	if len(profiles) < 2 {
		return fmt.Sprintf("This chat is answered by <b>%s</b>. The operator configured no other models to choose from.", render.Escape(cur.Model)), kb, nil
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "<b>Model for this chat</b>\nNow: <b>%s</b> (%s).\n", render.Escape(cur.Name), render.Escape(cur.Model))
	if chatID < 0 {
		sb.WriteString("The group's administrators can switch it with the buttons below.")
	} else {
		sb.WriteString("Tap another to switch; it answers from your next message on.")
	}
	for _, p := range profiles {
		label := p.Name + " · " + p.Model
		if p.Name == cur.Name {
			label = "✅ " + label
		}
		data := callback.Data{Kind: callback.Model, Profile: p.Name}.String()
		kb.InlineKeyboard = append(kb.InlineKeyboard, tgbotapi.NewInlineKeyboardRow(
			tgbotapi.NewInlineKeyboardButtonData(render.Shorten(label, 60), data)))
	}
	return sb.String(), kb, nil
}

// PressModel switches the profile of the conversation key, where the
// pressed /model was, checking the presser's right at the press; admin
// says the presser is an admin of the bot.
func (sc *Screen) PressModel(ctx context.Context, cq *tgbotapi.CallbackQuery, key string, data callback.Data, admin bool) {
	chatID, user := cq.Message.Chat.ID, cq.From.ID
	if !sc.mayPress(ctx, cq, admin, "Only the group's administrators can switch its model.") {
		return
	}
	var chosen *mcpgram.Profile
	for _, p := range sc.agent.Profiles() {
		if data.Names(p.Name) {
			chosen = &p
			break
		}
	}
	if chosen == nil {
		sc.tg.AnswerCallback(ctx, cq.ID, "That model is no longer configured.", true)
		return
	}
	if err := sc.agent.SetChatProfile(ctx, key, chosen.Name); err != nil {
		sc.logger.Error("switch a chat's model", "chat", chatID, "profile", chosen.Name, "err", err)
		sc.tg.AnswerCallback(ctx, cq.ID, "Sorry, something went wrong.", true)
		return
	}
	sc.logger.Info("chat switched its model", "chat", chatID, "user", user, "profile", chosen.Name)
	sc.tg.AnswerCallback(ctx, cq.ID, render.Shorten("Now answering with "+chosen.Name, 190), false)
	html, kb, err := sc.modelView(ctx, chatID, key)
	if err != nil {
		sc.logger.Error("read the chat's model", "chat", chatID, "err", err)
		return
	}
	if err := sc.tg.EditHTML(ctx, chatID, cq.Message.MessageID, html, &kb); err != nil {
		sc.logger.Debug("redraw /model", "chat", chatID, "err", err)
	}
}
