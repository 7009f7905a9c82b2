package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
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

// heartbeat returns the function the bot calls to say it is alive: it
// touches the file and tells the readiness probe. A file works without a
// listener, in any container, and says more than "the process runs": the
// bot polls and Telegram answers.
func heartbeat(cfg *config.Config, probe *web.Probe) func() {
	path := heartbeatPath(cfg)
	return func() {
		probe.OK()
		now := time.Now()
		if err := os.Chtimes(path, now, now); err != nil {
			_ = os.WriteFile(path, nil, 0o644)
		}
	}
}

// healthCommand exits 0 while the bot is ready, and 1 saying why
// otherwise; Docker's HEALTHCHECK runs it. With HTTP_LISTEN set it asks
// /readyz; without, it reads the heartbeat.
func healthCommand(cfg *config.Config, stdout io.Writer) error {
	if cfg.HTTPListen != "" {
		return readyCommand(cfg, stdout)
	}
	path := heartbeatPath(cfg)
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("unhealthy: no heartbeat at %s: the bot is not running, or has not reached Telegram yet", path)
	}
	if age := time.Since(st.ModTime()); age > healthyWithin {
		return fmt.Errorf("unhealthy: the last heartbeat is %s old (healthy within %s): the bot has not reached Telegram since", age.Round(time.Second), healthyWithin)
	}
	fmt.Fprintln(stdout, "healthy")
	return nil
}
