package apps

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/mcpgram/mcpgram/store"
)

// MaxContext bounds what an app keeps for its chat's next turn
// (ui/update-model-context), in bytes.
const MaxContext = store.MaxAppContext

// A Contexts keeps what the apps give the model for their chats' next
// turns; *Apps is one.
type Contexts interface {
	SetAppContext(ctx context.Context, c Message) error
}

// updateContext keeps an app's ui/update-model-context for the next turn
// of its chat, in place of what any app kept there before: its text
// blocks, and its structured content as JSON, within MaxContext.
func (h *Host) updateContext(ctx context.Context, v store.AppView, user int64, raw json.RawMessage) (any, *rpcError) {
	if h.opts.Contexts == nil {
		return nil, &rpcError{Code: codeMethodNotFound, Message: "this host keeps no context of apps"}
	}
	var p struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		Structured json.RawMessage `json:"structuredContent"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, &rpcError{Code: codeInvalidParams, Message: "ui/update-model-context needs content"}
	}
	var parts []string
	for _, c := range p.Content {
		if c.Type != "text" {
			return nil, &rpcError{Code: codeInvalidParams, Message: "ui/update-model-context takes text only"}
		}
		parts = append(parts, c.Text)
	}
	if len(p.Structured) > 0 && string(p.Structured) != "null" {
		var obj map[string]any
		if err := json.Unmarshal(p.Structured, &obj); err != nil {
			return nil, &rpcError{Code: codeInvalidParams, Message: "structuredContent must be an object"}
		}
		b, _ := json.Marshal(obj)
		parts = append(parts, string(b))
	}
	text := strings.TrimSpace(strings.Join(parts, "\n"))
	if len(text) > MaxContext {
		return nil, &rpcError{Code: codeInvalidParams, Message: "the context is over 4096 bytes"}
	}
	err := h.opts.Contexts.SetAppContext(ctx, Message{Key: v.ChatID, User: user, Title: v.Title, Text: text})
	if err != nil && !errors.Is(err, context.Canceled) {
		h.log.Warn("keep an app's context", "server", v.Server, "err", err)
		return nil, &rpcError{Code: codeInternal, Message: "the context could not be kept"}
	}
	return map[string]any{}, nil
}
