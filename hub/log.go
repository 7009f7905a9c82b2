package hub

import (
	"context"
	"log/slog"
)

// transportLogger is the logger mcp-go's HTTP transports of a server log
// to: its lines go to the server's log at debug level, scrubbed of what
// the URL holds of secrets. What matters of them reaches the hub as the
// errors of its calls; the rest is chatter ("listening to server
// forever"), or retried every second (a GET stream the server refuses).
func (s *server) transportLogger(cfg config) *slog.Logger {
	return slog.New(scrubHandler{h: s.log.Handler(), scrub: cfg.scrub})
}

// A scrubHandler passes records on at debug level, with scrub applied to
// the message and to every attribute's value.
type scrubHandler struct {
	h     slog.Handler
	scrub func(string) string
}

func (h scrubHandler) Enabled(ctx context.Context, _ slog.Level) bool {
	return h.h.Enabled(ctx, slog.LevelDebug)
}

func (h scrubHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, slog.LevelDebug, h.scrub(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(slog.String(a.Key, h.scrub(a.Value.Resolve().String())))
		return true
	})
	return h.h.Handle(ctx, out)
}

func (h scrubHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	scrubbed := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		scrubbed[i] = slog.String(a.Key, h.scrub(a.Value.Resolve().String()))
	}
	return scrubHandler{h: h.h.WithAttrs(scrubbed), scrub: h.scrub}
}

func (h scrubHandler) WithGroup(name string) slog.Handler {
	return scrubHandler{h: h.h.WithGroup(name), scrub: h.scrub}
}
