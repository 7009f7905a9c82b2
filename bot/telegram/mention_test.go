package telegram_test

import (
	"testing"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram/bot/telegram"
)

func TestAddressed(t *testing.T) {
	self := tgbotapi.User{ID: 42, UserName: "McpBot"}
	mention := func(text string, off, n int) *tgbotapi.Message {
		return &tgbotapi.Message{Text: text, Entities: []tgbotapi.MessageEntity{{Type: "mention", Offset: off, Length: n}}}
	}
	command := func(text string) *tgbotapi.Message {
		return &tgbotapi.Message{Text: text, Entities: []tgbotapi.MessageEntity{{Type: "bot_command", Offset: 0, Length: len(text)}}}
	}
	tests := []struct {
		name string
		m    *tgbotapi.Message
		want bool
	}{
		{"plain", &tgbotapi.Message{Text: "hello all"}, false},
		{"mention", mention("hi @mcpbot", 3, 7), true},
		// Offsets count UTF-16 units: the emoji takes two.
		{"mention after emoji", mention("😀 @McpBot do it", 3, 7), true},
		{"other mention", mention("hi @someone", 3, 8), false},
		{"text mention", &tgbotapi.Message{Text: "hi you", Entities: []tgbotapi.MessageEntity{{Type: "text_mention", Offset: 3, Length: 3, User: &self}}}, true},
		{"reply to the bot", &tgbotapi.Message{Text: "yes", ReplyToMessage: &tgbotapi.Message{From: &self}}, true},
		{"command", command("/help"), true},
		{"command to us", command("/help@mcpbot"), true},
		{"command to another bot", command("/help@otherbot"), false},
		{"entity past the end", mention("hi", 5, 7), false},
		{"mention in a caption", &tgbotapi.Message{Caption: "@McpBot what is this?", CaptionEntities: []tgbotapi.MessageEntity{{Type: "mention", Offset: 0, Length: 7}}}, true},
		{"caption's entity on the text", &tgbotapi.Message{Text: "@McpBot", Caption: "hi", CaptionEntities: []tgbotapi.MessageEntity{{Type: "mention", Offset: 0, Length: 7}}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := telegram.Addressed(tt.m, self); got != tt.want {
				t.Errorf("Addressed = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestStripMention(t *testing.T) {
	for in, want := range map[string]string{
		"@McpBot what time is it": "what time is it",
		"so @mcpbot  help me":     "so help me",
		"no mention":              "no mention",
		"@McpBot":                 "",
	} {
		if got := telegram.StripMention(in, "McpBot"); got != want {
			t.Errorf("StripMention(%q) = %q, want %q", in, got, want)
		}
	}
}
