package updates

import (
	"encoding/json"
	"unicode/utf16"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
	"github.com/mcpgram/mcpgram/bot/telegram"
)

// Decode reads an update's JSON, leaving out every entity that does not
// lie within its message's text (or caption): the library's methods
// (Command, CommandArguments) slice the text by the first entity and
// panic on one that lies outside it, which only a forged or broken update
// has.
func Decode(raw []byte) (tgbotapi.Update, error) {
	var u tgbotapi.Update
	if err := json.Unmarshal(raw, &u); err != nil {
		return tgbotapi.Update{}, err
	}
	for _, m := range []*tgbotapi.Message{u.Message, u.EditedMessage, u.ChannelPost, u.EditedChannelPost} {
		cleanMessage(m)
	}
	if u.CallbackQuery != nil {
		cleanMessage(u.CallbackQuery.Message)
	}
	return u, nil
}

// cleanMessage cleans m's entities and those of the messages it holds.
func cleanMessage(m *tgbotapi.Message) {
	if m == nil {
		return
	}
	m.Entities = within(m.Entities, m.Text)
	m.CaptionEntities = within(m.CaptionEntities, m.Caption)
	cleanMessage(m.ReplyToMessage)
	cleanMessage(m.PinnedMessage)
	if m.Chat != nil {
		cleanMessage(m.Chat.PinnedMessage)
	}
}

// within keeps the entities that lie within text, by Telegram's UTF-16
// offsets, each at least one unit long.
func within(entities []tgbotapi.MessageEntity, text string) []tgbotapi.MessageEntity {
	if len(entities) == 0 {
		return entities
	}
	n := len(utf16.Encode([]rune(text)))
	kept := entities[:0]
	for _, e := range entities {
		if e.Offset >= 0 && e.Length >= 1 && e.Offset <= n-e.Length {
			kept = append(kept, e)
		}
	}
	if len(kept) == 0 {
		return nil
	}
	return kept
}

// Topic is the forum topic of an update's message, or of the message
// whose button a callback query pressed: its thread where it is in a
// topic (see telegram.Thread), else 0, as for anything that does not
// decode. The library's types, of Bot API 5.5, have no topics.
func Topic(raw []byte) int {
	var u struct {
		Message       *telegram.Thread `json:"message"`
		CallbackQuery *struct {
			Message *telegram.Thread `json:"message"`
		} `json:"callback_query"`
	}
	if err := json.Unmarshal(raw, &u); err != nil {
		return 0
	}
	switch {
	case u.Message != nil:
		return u.Message.Topic()
	case u.CallbackQuery != nil && u.CallbackQuery.Message != nil:
		return u.CallbackQuery.Message.Topic()
	}
	return 0
}
