package apps

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/mcpgram/mcpgram/store"
)

// A Messenger takes what an app says into its chat (ui/message) as its
// user's words, and starts the turn that answers them; *Apps is one.
type Messenger interface {
	AppMessage(ctx context.Context, m Message) error
}

// A Message is what an app said in its chat.
type Message struct {
	Key   string // the conversation of the app's call
	User  int64  // who opened the app
	Title string // the app's
	Text  string
}

// ErrLimited is a Messenger's error for a user over the rate of
// messages.
var ErrLimited = errors.New("over the rate of messages")

// maxMessage bounds an app's message, in bytes: a Telegram message's
// length, which the echo of it must fit in.
const maxMessage = 3500

// message passes an app's ui/message on: the user's role, text blocks
// only, within maxMessage.
func (h *Host) message(ctx context.Context, v store.AppView, user int64, raw json.RawMessage) (any, *rpcError) {
	if h.opts.Messenger == nil {
		return nil, &rpcError{Code: codeMethodNotFound, Message: "this host takes no messages from apps"}
	}
	var p struct {
		Role    string `json:"role"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(raw, &p); err != nil || p.Role != "user" {
		return nil, &rpcError{Code: codeInvalidParams, Message: "ui/message needs the role user and its content"}
	}
	var parts []string
	size := 0
	for _, c := range p.Content {
		if c.Type != "text" {
			return nil, &rpcError{Code: codeInvalidParams, Message: "ui/message takes text only"}
		}
		size += len(c.Text) + 1
		if size > maxMessage {
			return nil, &rpcError{Code: codeInvalidParams, Message: "the message is too long"}
		}
		parts = append(parts, c.Text)
	}
	text := strings.TrimSpace(strings.Join(parts, "\n"))
	if text == "" {
		return nil, &rpcError{Code: codeInvalidParams, Message: "the message is empty"}
	}
	err := h.opts.Messenger.AppMessage(ctx, Message{Key: v.ChatID, User: user, Title: v.Title, Text: text})
	switch {
	case errors.Is(err, ErrLimited):
		return nil, &rpcError{Code: codeDeclined, Message: "too many messages: wait a moment"}
	case err != nil:
		h.log.Warn("an app's message", "server", v.Server, "user", user, "err", err)
		return map[string]any{"isError": true}, nil
	}
	return map[string]any{}, nil
}
