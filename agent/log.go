// Logs: every line of a turn carries the turn's id and its chat. The
// agent's own lines get them from the turn's logger; the executor's, which
// it logs with the call's context, from the context (see turnHandler).

package agent

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"

	"github.com/mcpgram/mcpgram"
)

// NewTurnID returns a short random id that ties a turn's log lines
// together; it need not be unpredictable, only unlikely to repeat.
func NewTurnID() string { return fmt.Sprintf("%012x", rand.Uint64()>>16) }

type turnKey struct{}

// withTurn returns ctx carrying the turn's attributes for turnHandler.
func withTurn(ctx context.Context, id string, caller mcpgram.Caller) context.Context {
	return context.WithValue(ctx, turnKey{}, []slog.Attr{slog.String("turn", id), slog.String("chat", caller.ChatID)})
}

// A turnHandler adds to each record logged with a turn's context the
// turn's id and chat.
type turnHandler struct{ slog.Handler }

func (h turnHandler) Handle(ctx context.Context, r slog.Record) error {
	if attrs, ok := ctx.Value(turnKey{}).([]slog.Attr); ok {
		r = r.Clone()
		r.AddAttrs(attrs...)
	}
	return h.Handler.Handle(ctx, r)
}

func (h turnHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return turnHandler{h.Handler.WithAttrs(attrs)}
}

func (h turnHandler) WithGroup(name string) slog.Handler {
	return turnHandler{h.Handler.WithGroup(name)}
}
