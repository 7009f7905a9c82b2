package tgfake

import (
	"encoding/json"
	"fmt"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// scopeKey is the key of the menus of the BotCommandScope JSON raw: "" for
// the default, "chat:ID" and "chat_administrators:ID" for one chat's, the
// scope's type for those of every chat of a kind. s.mu is held.
func (s *Server) scopeKey(raw string) (string, *apiError) {
	if raw == "" {
		return "", nil
	}
	var scope tgbotapi.BotCommandScope
	if err := json.Unmarshal([]byte(raw), &scope); err != nil {
		return "", badRequest("can't parse BotCommandScope JSON object")
	}
	switch scope.Type {
	case "default":
		return "", nil
	case "chat", "chat_administrators":
		if len(s.msgs[scope.ChatID]) == 0 {
			return "", badRequest("chat not found")
		}
		return fmt.Sprintf("%s:%d", scope.Type, scope.ChatID), nil
	}
	return scope.Type, nil
}

// ChatAdminCommands returns the commands set with setMyCommands for the
// administrators of the group chatID (scope chat_administrators).
func (s *Server) ChatAdminCommands(chatID int64) []tgbotapi.BotCommand {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]tgbotapi.BotCommand(nil), s.commands[fmt.Sprintf("chat_administrators:%d", chatID)]...)
}

// Commands returns the commands set with setMyCommands (and not deleted
// since with deleteMyCommands) for the default scope, or for one chat
// when chatID is not 0.
func (s *Server) Commands(chatID int64) []tgbotapi.BotCommand {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := ""
	if chatID != 0 {
		key = fmt.Sprintf("chat:%d", chatID)
	}
	return append([]tgbotapi.BotCommand(nil), s.commands[key]...)
}

// ScopeCommands returns the commands set with setMyCommands for a scope
// of every chat of a kind: all_private_chats, all_group_chats or
// all_chat_administrators.
func (s *Server) ScopeCommands(scope string) []tgbotapi.BotCommand {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]tgbotapi.BotCommand(nil), s.commands[scope]...)
}
