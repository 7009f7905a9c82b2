package agent

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/mcpgram/mcpgram/hub"
	"github.com/mcpgram/mcpgram/store"
)

// awaitServers waits, before the turn's first model call and up to
// StartWait, for the servers of the chat's catalog that are still
// starting: a bot answers as soon as it starts, and a message that was
// waiting for it would otherwise be answered by a model that lacks the
// tools of every server not up yet. A server that does not come up in
// time holds the turn back no longer. The servers that are still not
// available then are noted for the model (see withNote).
func (t *turn) awaitServers(ctx context.Context) {
	cat := t.catalog()
	var starting []string
	for _, s := range cat.Servers {
		if s.Status == hub.StatusStarting {
			starting = append(starting, s.Name)
		}
	}
	if wait := t.a.cfg.StartWait; len(starting) > 0 && wait > 0 {
		began := time.Now()
		t.logger.Info("waiting for servers to start", "servers", starting, "at_most", wait)
		wctx, cancel := context.WithTimeout(ctx, wait)
		for _, name := range starting {
			// One deadline for all; an error leaves the server's status
			// to say how it is.
			_ = t.a.cfg.Hub.WaitReady(wctx, name)
		}
		cancel()
		cat = t.catalog()
		t.logger.Info("waited for servers to start", "servers", starting, "waited", time.Since(began).Round(time.Millisecond), "unavailable", unavailable(cat))
	}
	if names := unavailable(cat); len(names) > 0 {
		t.note = noteUnavailable(names)
		t.noteAt = len(t.history) + len(t.unsaved) - 1
	}
}

// unavailable lists the servers of cat that are meant to run and do not,
// with how they are: "echo (still starting)".
func unavailable(cat hub.Catalog) []string {
	var out []string
	for _, s := range cat.Servers {
		why := ""
		switch s.Status {
		case hub.StatusStarting:
			why = "still starting"
		case hub.StatusRestarting:
			why = "restarting after a failure"
		case hub.StatusFailed:
			why = "failed"
		default:
			continue
		}
		out = append(out, s.Name+" ("+why+")")
	}
	return out
}

// noteUnavailable tells the model which servers it cannot use now, and
// so why their tools are missing from its prompt.
func noteUnavailable(servers []string) string {
	return "[Note from mcpgram, not from the user: these MCP servers are set up but cannot be used right now, so their tools are not listed: " +
		strings.Join(servers, ", ") + ". If this request needs one of them, say that it is unavailable at the moment.]"
}

// withNote returns history with the turn's note, if any, after the
// message the turn began at. The note goes with the turn's messages
// rather than into the system prompt, so that the system prompt stays
// the same bytes for providers' prefix caches; it stays at the same
// place for every model call of the turn, for the same reason. It is
// not stored: a later turn reads how the servers are then, not now.
func (t *turn) withNote(history []store.Message) []store.Message {
	if t.note == "" || t.noteAt < 0 || t.noteAt >= len(history) {
		return history
	}
	history = slices.Clone(history)
	m := &history[t.noteAt]
	m.Content += "\n\n" + t.note
	return history
}
