package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/hub"
	"github.com/mcpgram/mcpgram/internal/config"
	"github.com/mcpgram/mcpgram/llm"
	"github.com/mcpgram/mcpgram/prompt"
	"github.com/mcpgram/mcpgram/store"
)

// An App is the wired core that every front end drives: the store, the
// hub with its servers, the model client and the agent. Open builds it and
// Close takes it down in reverse order.
type App struct {
	Store *store.DB
	Hub   *hub.Hub
	Agent *agent.Agent
	Model *llm.Client
}

// Open opens the database, starts the MCP servers and wires the agent.
func Open(ctx context.Context, cfg *config.Config, logger *slog.Logger, watch bool) (app *App, err error) {
	app = &App{}
	defer func() {
		if err != nil {
			app.Close()
		}
	}()
	if app.Store, err = store.Open(ctx, cfg.DatabasePath); err != nil {
		return nil, fmt.Errorf("open database %s: %w", cfg.DatabasePath, err)
	}
	if app.Hub, err = hub.New(cfg.MCPSettings, hub.Options{Logger: logger.With("component", "hub"), NoWatch: !watch}); err != nil {
		return nil, err
	}
	if err = app.Hub.Start(ctx); err != nil {
		return nil, fmt.Errorf("start MCP servers: %w", err)
	}
	for _, s := range app.Hub.Catalog().Servers {
		if s.Status == hub.StatusFailed {
			logger.Warn("MCP server failed to start", "server", s.Name, "reason", s.Error, "stderr", s.LastStderr)
		}
	}
	app.Model, err = llm.New(llm.Config{
		BaseURL:     cfg.OpenAIBaseURL,
		APIKey:      cfg.OpenAIKey,
		Model:       cfg.Model,
		Temperature: cfg.Temperature,
		MaxTokens:   cfg.MaxTokens,
		Timeout:     cfg.LLMTimeout,
		Logger:      logger.With("component", "llm"),
	})
	if err != nil {
		return nil, fmt.Errorf("model client: %w", err)
	}
	app.Agent, err = agent.New(agent.Config{
		Model:            app.Model,
		Store:            app.Store,
		Hub:              app.Hub,
		SystemPrompt:     prompt.Build,
		Temperature:      cfg.Temperature,
		MaxTurns:         cfg.MaxTurns,
		MaxContextTokens: cfg.MaxContextTokens,
		AutoApproveAll:   cfg.AutoApproveAll,
		Logger:           logger.With("component", "agent"),
	})
	if err != nil {
		return nil, err
	}
	return app, nil
}

// Close stops the MCP servers and closes the database.
func (a *App) Close() error {
	var errs []error
	if a.Hub != nil {
		errs = append(errs, a.Hub.Close())
	}
	if a.Store != nil {
		errs = append(errs, a.Store.Close())
	}
	return errors.Join(errs...)
}
