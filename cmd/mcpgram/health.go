package main

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/mcpgram/mcpgram/internal/config"
	"github.com/mcpgram/mcpgram/web"
)

// The running bot touches the heartbeat file beside its database after each
// answer from Telegram's getUpdates, which comes at least every long-poll
// timeout (30 s); `mcpgram health` calls it stale after healthyWithin.
const healthyWithin = 90 * time.Second

func heartbeatPath(cfg *config.Config) string {
	return filepath.Join(filepath.Dir(cfg.DatabasePath), "heartbeat")
}

// stoppedMark is what the heartbeat file holds once the bot stopped
// cleanly: health then fails at once, not once the file grows old.
const stoppedMark = "stopped\n"

// heartbeat returns the function the bot calls to say it is alive: it
// touches the file and tells the readiness probe. A file works without a
// listener, in any container, and says more than "the process runs": the
// bot polls and Telegram answers. Its first beat empties the file of an
// earlier run's stoppedMark.
func heartbeat(cfg *config.Config, probe *web.Probe) func() {
	path := heartbeatPath(cfg)
	var once sync.Once
	return func() {
		probe.OK()
		once.Do(func() { _ = os.WriteFile(path, nil, 0o644) })
		now := time.Now()
		if err := os.Chtimes(path, now, now); err != nil {
			_ = os.WriteFile(path, nil, 0o644)
		}
	}
}

// markStopped writes stoppedMark in the heartbeat file as the bot stops
// polling, so that health says at once that it no longer runs.
func markStopped(cfg *config.Config, logger *slog.Logger) {
	if err := os.WriteFile(heartbeatPath(cfg), []byte(stoppedMark), 0o644); err != nil {
		logger.Warn("could not mark the heartbeat stopped: mcpgram health says healthy until it is 90 s old", "err", err)
	}
}

// healthCommand exits 0 while the bot is ready, and 1 saying why
// otherwise; Docker's HEALTHCHECK runs it. With HTTP_LISTEN set it asks
// /readyz; without, it reads the heartbeat.
func healthCommand(con console) error {
	if con.cfg.HTTPListen != "" {
		return readyCommand(con)
	}
	path := heartbeatPath(con.cfg)
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("unhealthy: no heartbeat at %s: the bot is not running, or has not reached Telegram yet", path)
	}
	if b, err := os.ReadFile(path); err == nil && string(b) == stoppedMark {
		return fmt.Errorf("unhealthy: the bot stopped at %s (a clean stop) and polls Telegram no more", st.ModTime().Format(time.DateTime))
	}
	if age := time.Since(st.ModTime()); age > healthyWithin {
		return fmt.Errorf("unhealthy: the last heartbeat is %s old (healthy within %s): the bot has not reached Telegram since", age.Round(time.Second), healthyWithin)
	}
	fmt.Fprintln(con.stdout, "healthy")
	return nil
}
