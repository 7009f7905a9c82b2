package telegram

import (
	"strings"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// Addressed reports whether a group message is for the bot self: a
// command without a bot name or with its own, a mention (in the text or a
// caption), or a reply to one of its messages.
func Addressed(m *tgbotapi.Message, self tgbotapi.User) bool {
	if m.IsCommand() {
		_, at, found := strings.Cut(m.CommandWithAt(), "@")
		return !found || strings.EqualFold(at, self.UserName)
	}
	if m.ReplyToMessage != nil && m.ReplyToMessage.From != nil && m.ReplyToMessage.From.ID == self.ID {
		return true
	}
	// A photo's or a file's words are its caption.
	return mentions(m.Text, m.Entities, self) || mentions(m.Caption, m.CaptionEntities, self)
}

func mentions(text string, entities []tgbotapi.MessageEntity, self tgbotapi.User) bool {
	for _, e := range entities {
		switch e.Type {
		case "mention":
			if strings.EqualFold(utf16Slice(text, e.Offset, e.Length), "@"+self.UserName) {
				return true
			}
		case "text_mention":
			if e.User != nil && e.User.ID == self.ID {
				return true
			}
		}
	}
	return false
}

// utf16Slice cuts s by Telegram's UTF-16 offsets.
func utf16Slice(s string, off, n int) string {
	pos, start := 0, -1
	for i, r := range s {
		if pos == off {
			start = i
		}
		if start >= 0 && pos == off+n {
			return s[start:i]
		}
		if r >= 0x10000 {
			pos += 2
		} else {
			pos++
		}
	}
	if start >= 0 && pos == off+n {
		return s[start:]
	}
	return ""
}

// StripMention removes every @username from text.
func StripMention(text, username string) string {
	if username == "" {
		return text
	}
	at := "@" + strings.ToLower(username)
	for {
		i := strings.Index(strings.ToLower(text), at)
		if i < 0 {
			break
		}
		left, right := strings.TrimRight(text[:i], " "), strings.TrimLeft(text[i+len(at):], " ")
		if left != "" && right != "" {
			left += " "
		}
		text = left + right
	}
	return strings.TrimSpace(text)
}
