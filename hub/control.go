package hub

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcpgram/mcpgram"
)

// SetEnabled enables or disables server: it writes "disabled" to the
// settings file, then starts the server (waiting until it is ready or
// failed) or stops it. Enabling a server that then fails to start is an
// error saying why; the setting stays written.
func (h *Hub) SetEnabled(ctx context.Context, server string, enabled bool) error {
	s, err := h.server(server)
	if err != nil {
		return err
	}
	verb := "disable"
	if enabled {
		verb = "enable"
	}
	h.fileMu.Lock()
	err = patchServer(h.path, server, "disabled", func(json.RawMessage) (json.RawMessage, error) {
		return json.Marshal(!enabled)
	})
	if err == nil {
		s.mu.Lock()
		s.cfg.disabled = !enabled
		s.mu.Unlock()
	}
	h.fileMu.Unlock()
	if err != nil {
		return fmt.Errorf("%s server %q: %w", verb, server, err)
	}
	s.op.Lock()
	defer s.op.Unlock()
	if !enabled {
		s.stopLogged(mcpgram.StatusDisabled)
		return nil
	}
	return s.startAndWait(ctx)
}

// Restart stops server and starts it again, waiting until it is ready or
// failed.
func (h *Hub) Restart(ctx context.Context, server string) error {
	s, err := h.server(server)
	if err != nil {
		return err
	}
	s.op.Lock()
	defer s.op.Unlock()
	s.mu.Lock()
	disabled := s.cfg.disabled
	s.mu.Unlock()
	if disabled {
		return fmt.Errorf("restart server %q: it is disabled: %w", server, mcpgram.ErrNotRunning)
	}
	s.stopLogged(mcpgram.StatusStopped)
	if err := s.startAndWait(ctx); err != nil {
		return fmt.Errorf("restart: %w", err)
	}
	return nil
}

// startAndWait starts s and reports how the first attempt went.
func (s *server) startAndWait(ctx context.Context) error {
	select {
	case <-s.start():
	case <-ctx.Done():
		return fmt.Errorf("start server %q: %w", s.name, ctx.Err())
	}
	info := s.info()
	if info.Status == mcpgram.StatusFailed {
		return fmt.Errorf("start server %q: %s", s.name, info.Error)
	}
	return nil
}
