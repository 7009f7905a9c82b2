package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/bot"
	"github.com/mcpgram/mcpgram/bot/apps"
	"github.com/mcpgram/mcpgram/bot/media"
	"github.com/mcpgram/mcpgram/internal/config"
	"github.com/mcpgram/mcpgram/llm"
	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/web"
)

// runCommand runs the Telegram bot until ctx ends (SIGINT or SIGTERM): it
// stops polling, lets running turns finish, then stops the MCP servers and
// closes the database.
func runCommand(ctx context.Context, con console) error {
	cfg := con.cfg
	if err := cfg.RequireTelegram(); err != nil {
		return err
	}
	logger := cfg.Logger(con.stderr)
	// The poller Open makes hands each task's end and change to the bot,
	// which Run starts and stops it with.
	var b *bot.Bot
	hooks := &TaskHooks{Ended: func(t store.Task) { b.TaskEnded(t) }, Changed: func(t store.Task) { b.TaskChanged(t) }}
	app, err := Open(ctx, cfg, logger, OpenOptions{Watch: true, Tasks: hooks, Apps: cfg.ShowsApps()})
	if err != nil {
		return err
	}
	defer closeAndWarn(app, logger)
	telegram := web.NewRecentProbe("telegram", healthyWithin)
	transcriber, err := newTranscriber(cfg)
	if err != nil {
		return err
	}
	a := app.Agent
	forms := agent.NewForms(a)
	parts := bot.Parts{Forms: forms, TaskInput: forms, Prompts: agent.NewPrompts(a), SignIns: agent.NewConnections(a), Prefs: agent.NewPrefs(a), Usage: agent.NewMeter(a)}
	b, err = bot.New(cfg.TelegramToken, a, parts, app.Hub, app.Store, bot.Options{
		Tasks:              app.Tasks,
		APIURL:             cfg.TelegramAPIURL,
		AllowedUserIDs:     cfg.AllowedUserIDs,
		AdminUserIDs:       cfg.AdminUserIDs,
		AutoApproveAll:     cfg.AutoApproveAll,
		RateLimitPerMinute: cfg.RateLimitPerMinute,
		SendsPerSecond:     cfg.SendsPerSecond,
		Limits:             app.Limits,
		Leases:             app.Leases,
		MaxConcurrentTurns: cfg.MaxConcurrentTurns,
		ChatLease:          cfg.ChatLease,
		Webhook:            cfg.Webhook,
		WebhookSecret:      cfg.WebhookSecret,
		WebhookURL:         cfg.WebhookURL,
		Heartbeat:          heartbeat(cfg, telegram),
		Transcriber:        transcriber,
		MaxDocumentBytes:   cfg.MaxDocumentBytes,
		Vision:             anyVision(cfg),
		MediaRetention:     cfg.MediaRetention,
		AppsURL:            appsURL(cfg),
		Connections:        app.Auth,
		Metrics:            app.Metrics,
		Logger:             logger.With("component", "bot"),
	})
	if err != nil {
		return err
	}
	defer b.Close()
	srv, err := startHTTP(cfg, app, telegram, b.WebhookHandler(), b.Apps(), logger)
	if err != nil {
		return err
	}
	defer closeHTTP(srv, logger)
	// Servers are still starting: each joins the catalog, and so the
	// prompt, once ready, while the bot already answers.
	def := agent.NewPrefs(a).DefaultProfile()
	logger.Info("mcpgram started", "version", version, "model", def.Model, "profile", def.Name, "profiles", len(cfg.Profiles), "servers", len(app.Hub.Catalog().Servers))
	err = b.Run(ctx)
	// Polling has stopped, whatever follows: health says so at once.
	markStopped(cfg, logger)
	if !errors.Is(err, bot.ErrCutShort) {
		return err
	}
	// Turns cut short at shutdown were logged, and run again at the next
	// start: a stop that loses nothing is not a failure.
	return nil
}

// anyVision says some profile sees images: the bot then fetches photos,
// and a turn whose profile does not see drops them, saying so.
func anyVision(cfg *config.Config) bool {
	for _, p := range cfg.Profiles {
		if p.Vision {
			return true
		}
	}
	return false
}

// newTranscriber returns the speech-to-text client, or nil (and no error)
// when TRANSCRIPTION_MODEL is not set: the bot then says voice messages
// are not set up.
func newTranscriber(cfg *config.Config) (media.Transcriber, error) {
	if cfg.TranscriptionModel == "" {
		return nil, nil
	}
	t, err := llm.NewTranscriber(cfg.TranscriptionBaseURL, cfg.TranscriptionModel, llm.TranscriberOptions{APIKey: cfg.TranscriptionKey})
	if err != nil {
		return nil, fmt.Errorf("TRANSCRIPTION_MODEL: %w", err)
	}
	return t, nil
}

// appsURL is where MCP Apps' pages are served, or "" where the bot can
// show none (see config.Config.ShowsApps).
func appsURL(cfg *config.Config) string {
	if !cfg.ShowsApps() {
		return ""
	}
	return cfg.PublicURL + apps.PathPrefix
}
