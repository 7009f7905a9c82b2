package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"path/filepath"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/bot/chats"
	"github.com/mcpgram/mcpgram/bot/limits"
	"github.com/mcpgram/mcpgram/dispatch"
	"github.com/mcpgram/mcpgram/executor"
	"github.com/mcpgram/mcpgram/hub"
	"github.com/mcpgram/mcpgram/internal/config"
	"github.com/mcpgram/mcpgram/llm"
	"github.com/mcpgram/mcpgram/metrics"
	"github.com/mcpgram/mcpgram/oauth"
	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/store/postgres"
	"github.com/mcpgram/mcpgram/store/sqlite"
	"github.com/mcpgram/mcpgram/tasks"
	"github.com/mcpgram/mcpgram/web"
)

// An App is the wired core that every front end drives: the store, the
// hub with its servers, the model clients (one per profile) and the
// agent. Open builds it and Close takes it down in reverse order.
type App struct {
	Store store.Store
	// Limits and Leases are set when the store is one several instances
	// share (PostgreSQL): the rate limits are counted there, and the
	// chats leased there. Nil, a single instance counts and runs them
	// all itself.
	Limits limits.Shared
	Leases dispatch.Claimer
	Hub    *hub.Hub
	// Auth keeps the sign-ins to MCP servers, which /connections lists.
	Auth  *oauth.Manager
	Agent *agent.Agent
	// Tasks follows the calls that run in the background, servers' tasks
	// and calls past BACKGROUND_AFTER, for a front end that shows them
	// (see OpenOptions.Tasks); nil for the others. The front end starts
	// and closes it.
	Tasks *tasks.Poller
	// Metrics is set when HTTP_LISTEN is, and ModelProbe follows the model
	// calls for /readyz.
	Metrics    *metrics.Metrics
	ModelProbe *web.Probe
}

// OpenOptions say how Open wires the core for a front end.
type OpenOptions struct {
	// Watch reloads the settings file when it changes.
	Watch bool
	// Wait makes Open return once every server is ready or failed;
	// without it, servers join the catalog as they come up, so a front
	// end can serve at once.
	Wait bool
	// Elicitor asks the user what a server asks mid-call; nil: the agent
	// does, through the events of the turn that called (the bot's way),
	// and then the agent also asks users to connect their accounts to
	// per-user servers.
	Elicitor mcpgram.Elicitor
	// Connect, with an Elicitor, makes the hub's Connector from the
	// keeper of sign-ins; nil: nobody can be asked to connect.
	Connect func(*oauth.Manager) mcpgram.Connector
	// Tasks, set, lets a server run a tool call as a task, whose result
	// comes later, and a plain call past BACKGROUND_AFTER go on in the
	// background: Open makes the poller that follows them (App.Tasks),
	// which tells Tasks of them. Only for a front end that shows them
	// (run: see bot.Options.Tasks).
	Tasks *TaskHooks
	// Apps: the front end shows MCP Apps (the bot, with an https
	// PUBLIC_URL served by HTTP_LISTEN; see config.Config.ShowsApps).
	Apps bool
}

// TaskHooks are what the poller of App.Tasks tells a front end: each
// task's end, once stored, and each stored change of its status. They run
// on the poller's goroutines: they must not block for long.
type TaskHooks struct {
	Ended   func(store.Task)
	Changed func(store.Task)
}

// Open reads the MCP settings, opens the database, wires the agent and
// starts the MCP servers, as opts say.
func Open(ctx context.Context, cfg *config.Config, logger *slog.Logger, opts OpenOptions) (*App, error) {
	app := &App{}
	if err := app.open(ctx, cfg, logger, opts); err != nil {
		closeAndWarn(app, logger)
		return nil, err
	}
	return app, nil
}

func (app *App) open(ctx context.Context, cfg *config.Config, logger *slog.Logger, opts OpenOptions) error {
	var err error
	if cfg.HTTPListen != "" {
		app.Metrics = metrics.New()
	}
	app.ModelProbe = web.NewFailureProbe("model", modelWindow)
	// The store first: the hub keeps its sign-ins to servers there.
	if err = app.openStore(ctx, cfg, logger); err != nil {
		return err
	}
	if app.Auth, err = newAuth(cfg, app.Store, logger); err != nil {
		return err
	}
	// Two phases: the hub is made, then the agent that calls tools through
	// it, then the hub is told whom to ask mid-call (the agent, unless the
	// front end asks itself), and only then starts its servers.
	if app.Hub, err = newHub(cfg, logger, hubParts{Watch: opts.Watch, Metrics: app.Metrics, Auth: app.Auth, Apps: opts.Apps}); err != nil {
		return err
	}
	app.Metrics.Collector(app.Hub.Collector())
	for _, w := range app.Hub.Warnings() {
		logger.Warn("settings file: " + w)
	}
	if opts.Tasks != nil {
		hooks := opts.Tasks
		app.Tasks = tasks.New(app.Store, app.Hub, tasks.Options{
			Finished: func(t store.Task, _ tasks.Outcome) { hooks.Ended(t) },
			Changed:  hooks.Changed,
			Logger:   logger.With("component", "tasks"),
			Metrics:  app.Metrics,
			// PostgreSQL is what several instances share: each polls the
			// tasks it leased, and takes over those of one that died.
			Shared:     cfg.DatabaseURL != "",
			Lease:      cfg.TaskLease,
			RenewEvery: cfg.TaskLease / 3,
		})
	}
	if app.Agent, err = newAgent(cfg, logger, app); err != nil {
		return err
	}
	asks := hub.Askers{Elicitor: app.Agent, Connector: app.Agent}
	if opts.Elicitor != nil {
		asks = hub.Askers{Elicitor: opts.Elicitor}
		if opts.Connect != nil {
			asks.Connector = opts.Connect(app.Auth)
		}
	}
	if err := app.Hub.AskThrough(asks); err != nil {
		return err
	}
	logSandboxes(cfg, logger)
	if !opts.Wait {
		if err := app.Hub.Launch(); err != nil {
			return fmt.Errorf("start MCP servers: %w", err)
		}
		return nil
	}
	if err = app.Hub.Start(ctx); err != nil {
		return fmt.Errorf("start MCP servers: %w", err)
	}
	for _, s := range app.Hub.Catalog().Servers {
		if s.Status == mcpgram.StatusFailed {
			logger.Warn("MCP server failed to start", "server", s.Name, "reason", s.Error, "stderr", s.LastStderr)
		}
	}
	return nil
}

// newAgent makes the agent over app's store, hub and sign-ins, with one
// model client per configured profile; with app.Tasks, a call its server
// runs as a task answers at once, and a plain call past BACKGROUND_AFTER
// goes on in the background (see OpenOptions.Tasks).
func newAgent(cfg *config.Config, logger *slog.Logger, app *App) (*agent.Agent, error) {
	models, err := newModels(cfg, logger, app.ModelProbe)
	if err != nil {
		return nil, err
	}
	var exec executor.Options
	var keeper agent.Keeper // never a nil poller in the interface
	if app.Tasks != nil {
		exec.Tasks, keeper = app.Hub, app.Tasks
	}
	return agent.New(app.Store, app.Hub, models, agent.Options{
		BackgroundAfter:       cfg.BackgroundAfter,
		Keeper:                keeper,
		DefaultProfile:        cfg.DefaultProfile,
		MaxTurns:              cfg.MaxTurns,
		StartWait:             cfg.StartWait,
		AutoApproveAll:        cfg.AutoApproveAll,
		TokenBudgetPerUserDay: cfg.TokenBudgetPerUserDay,
		PinnedTools:           cfg.PinnedTools,
		SignIns:               app.Auth,
		RedirectURI:           redirectURI(cfg),
		Group:                 chats.IsGroup,
		Chat:                  chats.Of,
		Executor:              exec,
		Metrics:               app.Metrics,
		Logger:                logger.With("component", "agent"),
	})
}

// redirectURI is where a user's browser comes back from a sign-in: the
// HTTP listener at PUBLIC_URL, else a loopback address whose address the
// user sends to the chat.
func redirectURI(cfg *config.Config) string {
	if cfg.PublicURL != "" && cfg.HTTPListen != "" {
		return cfg.PublicURL + mcpgram.CallbackPath
	}
	return mcpgram.PasteBackRedirect
}

// newModels makes one model client per configured profile, each telling
// the readiness probe how its calls went.
func newModels(cfg *config.Config, logger *slog.Logger, probe *web.Probe) ([]agent.Model, error) {
	var out []agent.Model
	for _, p := range cfg.Profiles {
		client, err := llm.New(p, llm.Options{
			Timeout: cfg.LLMTimeout,
			Logger:  logger.With("component", "llm", "profile", p.Name),
		})
		if err != nil {
			return nil, fmt.Errorf("model client of profile %q: %w", p.Name, err)
		}
		out = append(out, probedModel{client, probe})
	}
	return out, nil
}

// openStore opens PostgreSQL when DATABASE_URL is set, else the SQLite
// file at DATABASE_PATH: the agent and the bot take either, and neither
// knows which. The Store stays nil on error, which keeps Close from
// closing a nil database.
func (app *App) openStore(ctx context.Context, cfg *config.Config, logger *slog.Logger) error {
	if cfg.DatabaseURL != "" {
		db, err := postgres.Open(ctx, cfg.DatabaseURL)
		if err != nil {
			// The error names host, user and database, never the password.
			return fmt.Errorf("%w (check DATABASE_URL: the server must be up and the database exist)", err)
		}
		logger.Info("using PostgreSQL", "database", db.Name())
		// PostgreSQL is what several instances share: the rate limits
		// and the chats' leases go through it.
		app.Store, app.Limits, app.Leases = db, db, db
		return nil
	}
	db, err := sqlite.Open(ctx, cfg.DatabasePath)
	if err != nil {
		// The error names the database already.
		return fmt.Errorf("%w (set DATABASE_PATH or --database-path to a file in a folder you may write)", err)
	}
	app.Store = db
	return nil
}

// hubParts are what a hub takes beyond the configuration; the zero value
// is the command line's hub: no metrics, no sign-ins, and a settings file
// read once.
type hubParts struct {
	// Watch reloads the settings file when it changes, as the bot does.
	Watch   bool
	Metrics *metrics.Metrics
	Auth    mcpgram.Authorizer
	// Apps announces MCP Apps to servers (see hub.Options.Apps).
	Apps bool
}

// newHub reads the MCP settings file. A missing file is an error, not "no
// servers": a mistyped path would otherwise start a bot without its tools
// and without a word about why.
func newHub(cfg *config.Config, logger *slog.Logger, parts hubParts) (*hub.Hub, error) {
	relocate(cfg, logger)
	h, err := hub.New(cfg.MCPSettings, hub.Options{
		Auth:      parts.Auth,
		Metrics:   parts.Metrics,
		Logger:    logger.With("component", "hub"),
		NoWatch:   !parts.Watch,
		LookupEnv: cfg.LookupEnv,
		Sandbox:   cfg.Sandbox,
		Protected: protected(cfg),
		Apps:      parts.Apps,
	})
	if errors.Is(err, fs.ErrNotExist) {
		path, _ := filepath.Abs(cfg.MCPSettings)
		return nil, fmt.Errorf("no MCP settings file at %s: create one (the repository's mcp-settings.json is a start, and {\"mcpServers\": {}} runs with no tools) or point --mcp-settings or MCP_SETTINGS at yours", path)
	}
	if err != nil {
		return nil, fmt.Errorf("%w; fix the file, or point --mcp-settings or MCP_SETTINGS at another", err)
	}
	return h, nil
}

// relocate moves a server's file that lies right in the bot's data folder
// (the memory server's ./data/memory.db, as mcpgram shipped it before
// servers had folders of their own) into a folder of the server's own, and
// points its entry there: such a server would now be refused, for it could
// write beside the bot's database. It says so in the log; what it cannot
// move, the server's refusal explains.
func relocate(cfg *config.Config, logger *slog.Logger) {
	if cfg.DatabasePath == "" {
		return
	}
	data, err := filepath.Abs(filepath.Dir(cfg.DatabasePath))
	if err != nil {
		return
	}
	moves, err := hub.Relocate(cfg.MCPSettings, data, protected(cfg), cfg.LookupEnv)
	for _, m := range moves {
		logger.Warn("moved a server's file out of the bot's data folder, into a folder of its own, and pointed its entry in the settings file there", "server", m.Server, "from", m.From, "to", m.To)
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		logger.Warn("could not move a server's file out of the bot's data folder", "err", err)
	}
}

// protected lists the bot's paths that no MCP server may see: those of
// the configuration and its data (see config.Protected), and what it
// writes beside its database.
func protected(cfg *config.Config) []string {
	paths := cfg.Protected()
	for _, p := range []string{heartbeatPath(cfg), chatLogPath(cfg), keyFilePath(cfg)} {
		if abs, err := filepath.Abs(p); err == nil {
			paths = append(paths, abs)
		}
	}
	return paths
}

// logSandboxes says, as the MCP servers start, how they run: a warning where
// they run unconfined though MCP_SANDBOX asked for a sandbox.
func logSandboxes(cfg *config.Config, logger *slog.Logger) {
	s := hub.Sandboxes()
	switch {
	case cfg.Sandbox == mcpgram.SandboxOff:
		logger.Warn("MCP servers run without a sandbox (MCP_SANDBOX=off) and can read whatever this user can, unless their own settings ask for one")
	case s.Best() == "":
		logger.Warn(s.String())
	default:
		logger.Info(s.String())
	}
}

// Close stops the MCP servers and closes the database; it is safe on an
// App that Open left half built. Its error names each server that had to
// be killed, and any failure to close the database.
func (a *App) Close() error {
	if a == nil {
		return nil
	}
	var errs []error
	if a.Hub != nil {
		errs = append(errs, a.Hub.Close())
	}
	if a.Store != nil {
		errs = append(errs, a.Store.Close())
	}
	return errors.Join(errs...)
}

// closeAndWarn closes c (an App, or a hub on its own) once a command is
// done. What goes wrong then, such as a server that had to be killed, is
// worth a warning in the log, not the failure of a command whose work is
// done.
func closeAndWarn(c io.Closer, logger *slog.Logger) {
	if err := c.Close(); err != nil {
		logger.Warn("shutdown was not clean", "err", err)
	}
}
