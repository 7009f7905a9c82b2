package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/bot/apps"
	"github.com/mcpgram/mcpgram/internal/config"
	"github.com/mcpgram/mcpgram/llm"
	"github.com/mcpgram/mcpgram/oauth"
	"github.com/mcpgram/mcpgram/web"
)

// webhookPath is where Telegram posts updates in webhook mode.
const webhookPath = "/telegram"

// modelWindow is how long a model that answered stays ready through
// failures that follow: a provider's hiccup is not an outage.
const modelWindow = 5 * time.Minute

// startHTTP starts the endpoint of HTTP_LISTEN: /metrics, /healthz (the
// database answers) and /readyz (Telegram answers the long poll, and the
// model is not failing). In webhook mode it also takes Telegram's updates
// at /telegram, and with PUBLIC_URL it serves mcpgram's OAuth Client ID
// Metadata Document, and the pages of MCP Apps where it shows them (shown,
// the bot's; nil: none). It returns nil when HTTP_LISTEN is empty.
func startHTTP(cfg *config.Config, app *App, telegram *web.Probe, webhook http.Handler, shown *apps.Apps, logger *slog.Logger) (*web.Server, error) {
	if cfg.HTTPListen == "" {
		return nil, nil
	}
	s := web.New(cfg.HTTPListen, web.Options{
		Metrics: app.Metrics,
		Health:  []web.Check{{Name: "database", Check: app.Store.Ping}},
		Ready: []web.Check{
			{Name: "telegram", Check: telegram.Check},
			{Name: "model", Check: app.ModelProbe.Check},
		},
		Logger: logger.With("component", "http"),
	})
	if cfg.Webhook {
		s.Handle("POST "+webhookPath, webhook)
	}
	if cfg.PublicURL != "" && cfg.ClientMetadataURL == cfg.PublicURL+config.ClientMetadataPath {
		s.Handle("GET "+config.ClientMetadataPath, oauth.ClientMetadata(cfg.ClientMetadataURL, cfg.PublicURL))
	}
	if cfg.PublicURL != "" && app.Auth != nil && app.Agent != nil {
		s.Handle(mcpgram.CallbackPath, signInCallback(app.Auth, app.Agent, app.Hub, logger.With("component", "oauth")))
	}
	if cfg.ShowsApps() && shown != nil {
		apps.NewHost(app.Store, app.Hub, apps.HostOptions{
			BotToken: cfg.TelegramToken, AutoApproveAll: cfg.AutoApproveAll, Asker: shown, Messenger: shown, Contexts: shown,
			Permissions: cfg.AppsPermissions, Frames: apps.NewFrames(cfg.PublicURL, cfg.AppsOrigin),
			Metrics: app.Metrics, Logger: logger.With("component", "apps"),
		}).Register(s)
	}
	if err := s.Start(); err != nil {
		return nil, err
	}
	return s, nil
}

// closeHTTP stops the endpoint, if any, giving requests in flight a moment.
func closeHTTP(s *web.Server, logger *slog.Logger) {
	if s == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Close(ctx); err != nil {
		logger.Warn("stop the HTTP endpoint", "err", err)
	}
}

// probedModel tells the model's readiness probe how each call went.
type probedModel struct {
	agent.Model
	probe *web.Probe
}

func (m probedModel) Complete(ctx context.Context, req llm.Request) (*llm.Response, error) {
	resp, err := m.Model.Complete(ctx, req)
	switch {
	case err == nil:
		m.probe.OK()
	case ctx.Err() == nil:
		m.probe.Fail()
	}
	return resp, err
}

// readyCommand asks the running bot's /readyz, for `mcpgram health` when
// HTTP_LISTEN is set.
func readyCommand(con console) error {
	host, port, err := net.SplitHostPort(con.cfg.HTTPListen)
	if err != nil {
		return fmt.Errorf("HTTP_LISTEN %q: %w", con.cfg.HTTPListen, err)
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get("http://" + net.JoinHostPort(host, port) + "/readyz")
	if err != nil {
		return fmt.Errorf("unhealthy: %w", errors.Unwrap(err))
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("unhealthy: %s", body)
	}
	fmt.Fprintf(con.stdout, "healthy: %s", body)
	return nil
}
