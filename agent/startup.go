package agent

import (
	"context"
	"time"

	"github.com/mcpgram/mcpgram"
)

// awaitServers waits, before the turn's first model call and up to
// StartWait, for the servers of the chat's catalog that are still
// starting: a bot answers as soon as it starts, and a message that was
// waiting for it would otherwise be answered by a model that lacks the
// tools of every server not up yet. A server that does not come up in
// time holds the turn back no longer; the system prompt names the
// servers set up but not available (see prompt), so the model can say
// that a request needs one of them.
func (t *turn) awaitServers(ctx context.Context) {
	wait := t.a.cfg.StartWait
	if wait <= 0 {
		return
	}
	var starting []string
	for _, s := range t.catalog().Servers {
		if s.Status == mcpgram.StatusStarting {
			starting = append(starting, s.Name)
		}
	}
	if len(starting) == 0 {
		return
	}
	began := time.Now()
	t.logger.Info("waiting for servers to start", "servers", starting, "at_most", wait)
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for _, name := range starting {
		// One deadline for all; an error leaves the server's status to
		// say how it is.
		_ = t.a.cfg.Hub.WaitReady(wctx, name)
	}
	var still []string
	for _, s := range t.catalog().Servers {
		if s.Status == mcpgram.StatusStarting || s.Status == mcpgram.StatusRestarting || s.Status == mcpgram.StatusFailed {
			still = append(still, s.Name+" ("+string(s.Status)+")")
		}
	}
	t.logger.Info("waited for servers to start", "waited", time.Since(began).Round(time.Millisecond), "unavailable", still)
}
