// Package hub runs the MCP servers named in an mcp-settings.json file as
// child processes (or remote connections), keeps them alive, keeps a catalog
// of their tools and resources, and routes every tool call and resource read
// to the right server. It knows nothing of Telegram or of models.
package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/metrics"
)

// Options tune a Hub. The zero value is what the bot uses; tests shorten
// the durations.
type Options struct {
	Logger *slog.Logger

	// RestartDelay is the first wait before restarting a crashed server
	// (default 1s); it doubles up to MaxRestartDelay (default 60s) and
	// starts over once a server has run for HealthyAfter (default 1m).
	RestartDelay    time.Duration
	MaxRestartDelay time.Duration
	HealthyAfter    time.Duration

	// StopGrace is how long a stopping server has to exit once its stdin is
	// closed before its process group gets SIGTERM (default 2s); KillGrace
	// is how long after that until SIGKILL (default 3s).
	StopGrace time.Duration
	KillGrace time.Duration

	// WatchDelay gathers the burst of events one save of the settings file
	// makes into one reload (default 100ms).
	WatchDelay time.Duration
	// NoWatch turns the settings file watcher off.
	NoWatch bool

	// MaxMessage bounds one line a stdio server writes, in bytes (default
	// DefaultMaxMessage). A server past it is stopped, and its status
	// says why.
	MaxMessage int

	// LookupEnv expands ${env:VAR} in the settings file (default
	// os.LookupEnv). The configuration layer passes one that also sees
	// .env, so the file and the bot agree on what is set.
	LookupEnv func(string) (string, bool)

	// Metrics, when set, records start-up times and restarts, and reports
	// each server's status at every scrape.
	Metrics *metrics.Metrics

	// Auth signs the hub in to remote servers that ask for it (MCP
	// authorization); nil: a server that answers 401 fails. Who asks the
	// user mid-call is not an option: see Askers.
	Auth mcpgram.Authorizer
	// SessionIdle is how long a user's session of such a server stays
	// open after its last call (default DefaultSessionIdle).
	SessionIdle time.Duration
	// Sandbox is how stdio servers whose entries set no sandbox mode run
	// (default SandboxAuto: sandboxed wherever this machine allows).
	Sandbox mcpgram.SandboxMode
	// Protected lists the bot's paths, present or future, that no
	// sandboxed server may see: its .env and secret files, its database
	// and the journals SQLite may create beside it, its media folder, its
	// log and heartbeat, its sealed sign-in key. The settings file is
	// always one. No sandbox shows them: a folder that holds one is shown
	// read-only entry by entry without it, and a server whose entry would
	// have it write in such a folder is not started, and says why (a
	// file could be planted there before the bot makes it, or replaced
	// while the server runs).
	Protected []string

	// Confine is the program every stdio server starts through (see
	// package confine): the path of a binary whose main calls
	// confine.Main first. Default: ConfineProgram beside this process's
	// binary, else on PATH, else this process's binary itself.
	Confine string
	// UserBase is the first of the users servers run as where the bot
	// runs as root (default DefaultUserBase).
	UserBase int
	// CacheDir holds each server's own package caches (default: under
	// /var/cache/mcpgram for root, else the user's cache folder).
	CacheDir string
	// BoundsEvery is how often the hub checks each server's processes,
	// together, against its bounds (default 2 s).
	BoundsEvery time.Duration
	// Apps says the bot can show MCP Apps (it has an https PUBLIC_URL):
	// only then does the hub announce the extension to servers.
	Apps bool
}

func (o *Options) setDefaults() {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.RestartDelay, time.Second)
	def(&o.MaxRestartDelay, 60*time.Second)
	def(&o.HealthyAfter, time.Minute)
	def(&o.StopGrace, 2*time.Second)
	def(&o.KillGrace, 3*time.Second)
	def(&o.WatchDelay, 100*time.Millisecond)
	def(&o.SessionIdle, DefaultSessionIdle)
	if o.MaxMessage <= 0 {
		o.MaxMessage = DefaultMaxMessage
	}
	if o.LookupEnv == nil {
		o.LookupEnv = os.LookupEnv
	}
	if o.Sandbox == "" {
		o.Sandbox = mcpgram.SandboxAuto
	}
	def(&o.BoundsEvery, 2*time.Second)
	if o.UserBase <= 0 {
		o.UserBase = DefaultUserBase
	}
	if o.Confine == "" {
		o.Confine = confineProgram()
	}
}

// Askers are whom the hub asks, on a user's behalf, in the middle of a
// call. They are often built after the hub (the agent asks, and calls
// tools through the hub), so they are not Options: AskThrough gives them
// to the hub between New and Start.
type Askers struct {
	// Elicitor asks the user what a server asks in the middle of a call
	// (see Elicitation). Without one the hub declares no elicitation to
	// servers, and answers one that asks anyway "cancel".
	Elicitor mcpgram.Elicitor
	// Connector asks a user to connect their own account to a server that
	// acts as each user's (see account.go); nil: such calls fail, saying
	// nobody can be asked.
	Connector mcpgram.Connector
}

// A Hub runs the MCP servers of one settings file and routes calls to them.
// Start starts it and Close stops it; every other method is safe for
// concurrent use between the two.
type Hub struct {
	path string
	opts Options
	log  *slog.Logger
	// ask is set by AskThrough before the hub starts, and only read once
	// it has.
	ask Askers

	version atomic.Uint64
	// wake is closed, and replaced, at every change of the catalog, so that
	// a call can wait for a server to come up.
	wakeMu sync.Mutex
	wake   chan struct{}

	// fileMu serializes reading and writing the settings file with the
	// updates of the in-memory settings that go with them, so that the
	// watcher never mistakes the hub's own write for an edit.
	fileMu sync.Mutex

	mu      sync.Mutex
	servers map[string]*server
	// users keeps what serverUser drew for each server (a catalog asks
	// for every server's): nil again whenever servers changes, as each
	// is drawn among them all.
	users map[string]user
	// warnings say what the settings file holds that the hub does not
	// read, as of its last reading.
	warnings []string
	started  bool
	// closed is atomic because servers check it under their own lock,
	// which must never wait for mu.
	closed atomic.Bool

	watchCancel context.CancelFunc
	watchDone   chan struct{}

	// legacy remembers the launches of servers that ignored
	// server/discover, so that their restarts do not wait for it again.
	legacyMu sync.Mutex
	legacy   map[string]bool
	// answered remembers which questions of which tasks were answered.
	answered answered
	// launcher starts the sandboxed servers (see launcher).
	launcher launcher
}

// New reads the settings file at settingsPath. It fails only when the file
// cannot be read or is not valid JSON (naming file, line and column); a
// broken server entry marks just that server failed. The first New of a
// process also finds out which sandboxes this machine offers (Sandboxes),
// so that no catalog waits for that later.
func New(settingsPath string, opts Options) (*Hub, error) {
	opts.setDefaults()
	if _, err := mcpgram.ParseSandboxMode(string(opts.Sandbox)); err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	machine()
	path, err := filepath.Abs(settingsPath)
	if err != nil {
		return nil, fmt.Errorf("settings path: %w", err)
	}
	cfgs, warnings, err := loadSettings(path, opts.LookupEnv)
	if err != nil {
		return nil, err
	}
	h := &Hub{
		wake:     make(chan struct{}),
		path:     path,
		opts:     opts,
		log:      opts.Logger,
		servers:  make(map[string]*server),
		warnings: warnings,
	}
	for _, cfg := range cfgs {
		h.servers[cfg.name] = newServer(h, cfg)
	}
	h.changed()
	return h, nil
}

func (h *Hub) changed() {
	h.version.Add(1)
	h.wakeMu.Lock()
	close(h.wake)
	h.wake = make(chan struct{})
	h.wakeMu.Unlock()
}

// changes returns a channel closed at the next change of the catalog.
func (h *Hub) changes() <-chan struct{} {
	h.wakeMu.Lock()
	defer h.wakeMu.Unlock()
	return h.wake
}

func (h *Hub) isClosed() bool { return h.closed.Load() }

// Warnings says what the settings file, as last read, holds that the hub
// does not read: unknown fields (with the field probably meant) and keys,
// which are ignored rather than refused, so that a file shared with other
// hosts still works, and a file with no server list. Each names the file
// and, where it can, the line. New leaves telling them to its caller; a
// reload logs them.
func (h *Hub) Warnings() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.warnings)
}

// Stderr returns what the last process of server wrote to stderr, up to the
// last 16 KiB: the first thing to read when a server fails.
func (h *Hub) Stderr(server string) (string, error) {
	s, err := h.server(server)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	t := s.last.stderr
	s.mu.Unlock()
	if t == nil {
		return "", nil
	}
	return t.String(), nil
}

// AskThrough makes a whom the hub asks mid-call: the second phase of
// building a hub whose askers are built after it. It must come before
// Start, StartServers or Launch, for a server learns at its start
// whether the hub can ask (its client's capabilities); after that it is
// an error, and the askers stay as they were. A hub never given any
// asks nobody.
func (h *Hub) AskThrough(a Askers) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.started || h.closed.Load() {
		return errors.New("hub: askers are given before the hub starts")
	}
	h.ask = a
	return nil
}

// Start starts every enabled server at once and returns when each has
// answered initialize and tools/list, or failed, each within its own
// timeout; then it watches the settings file. A server that fails does not
// fail Start: its status says why. Start returns early only if ctx ends.
func (h *Hub) Start(ctx context.Context) error {
	readies, err := h.launch(nil)
	if err != nil {
		return err
	}
	return waitReady(ctx, readies)
}

// waitReady waits for each of readies to close, or for ctx to end.
func waitReady(ctx context.Context, readies []<-chan struct{}) error {
	for _, r := range readies {
		select {
		case <-r:
		case <-ctx.Done():
			return fmt.Errorf("start hub: %w", ctx.Err())
		}
	}
	return nil
}

// StartServers is Start for the named servers alone, as a command that
// needs one server starts just that one; the others stay stopped, and the
// settings file is not watched. A name the file does not have is
// ErrUnknownServer; a disabled or broken entry is left as it is.
func (h *Hub) StartServers(ctx context.Context, names ...string) error {
	h.mu.Lock()
	for _, n := range names {
		if _, ok := h.servers[n]; !ok {
			h.mu.Unlock()
			return fmt.Errorf("start server %q: %w", n, mcpgram.ErrUnknownServer)
		}
	}
	h.mu.Unlock()
	readies, err := h.launch(names)
	if err != nil {
		return err
	}
	return waitReady(ctx, readies)
}

// Launch is Start without the wait: it starts every enabled server and
// returns at once. Each server shows as starting in the catalog and joins
// it, tools and all, when it is ready; a front end can serve meanwhile.
func (h *Hub) Launch() error {
	_, err := h.launch(nil)
	return err
}

// launch starts the enabled servers, those of only (when not nil)
// alone, and then the watcher unless only is set or NoWatch.
func (h *Hub) launch(only []string) ([]<-chan struct{}, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.started || h.closed.Load() {
		return nil, errors.New("start hub: already started")
	}
	h.started = true
	var readies []<-chan struct{}
	for name, s := range h.servers {
		if only != nil && !slices.Contains(only, name) {
			continue
		}
		s.mu.Lock()
		enabled := !s.cfg.disabled && s.cfg.err == nil
		s.mu.Unlock()
		if enabled {
			readies = append(readies, s.start())
		}
	}
	if !h.opts.NoWatch && only == nil {
		if err := h.watch(); err != nil {
			h.log.Warn("settings file is not watched", "err", err)
		}
	}
	return readies, nil
}

// Close stops the watcher and every server, leaving no process behind. It
// returns an error naming each server that ignored the request to stop and
// had to be killed; the others stopped cleanly.
func (h *Hub) Close() error {
	h.mu.Lock()
	if h.closed.Swap(true) {
		h.mu.Unlock()
		return nil
	}
	servers := slices.Collect(maps.Values(h.servers))
	cancel, done := h.watchCancel, h.watchDone
	h.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
	// In name order, so that the error reads the same every time.
	slices.SortFunc(servers, func(a, b *server) int { return strings.Compare(a.name, b.name) })
	errs := make([]error, len(servers))
	var wg sync.WaitGroup
	for i, s := range servers {
		wg.Go(func() {
			s.op.Lock()
			defer s.op.Unlock()
			if err := s.stop(mcpgram.StatusStopped); err != nil {
				errs[i] = fmt.Errorf("stop server %q: %w", s.name, err)
			}
		})
	}
	wg.Wait()
	h.launcher.close()
	return errors.Join(errs...)
}

// Catalog returns a snapshot of every configured server, sorted by name.
func (h *Hub) Catalog() mcpgram.Catalog {
	// Read the version first: a change racing with the snapshot then bumps
	// it past what the caller saw, and the caller looks again.
	c := mcpgram.Catalog{Version: h.version.Load()}
	h.mu.Lock()
	servers := slices.Collect(maps.Values(h.servers))
	h.mu.Unlock()
	for _, s := range servers {
		c.Servers = append(c.Servers, s.info())
	}
	slices.SortFunc(c.Servers, func(a, b mcpgram.ServerInfo) int { return strings.Compare(a.Name, b.Name) })
	return c
}

func (h *Hub) server(name string) (*server, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s, ok := h.servers[name]
	if !ok {
		return nil, fmt.Errorf("server %q: %w", name, mcpgram.ErrUnknownServer)
	}
	return s, nil
}

func meta(caller mcpgram.Caller) map[string]any {
	m := make(map[string]any, 2)
	if caller.UserID != "" {
		m[MetaUserID] = caller.UserID
	}
	if caller.ChatID != "" {
		m[MetaChatID] = caller.ChatID
	}
	if caller.Consent {
		m[MetaConsent] = true
	}
	return m
}

// WaitReady waits while server is starting or restarting, up to its
// timeout, so that a caller can check a call against its tools. It returns
// nil once the server runs, and otherwise an error saying how it is.
func (h *Hub) WaitReady(ctx context.Context, server string) error {
	s, err := h.server(server)
	if err != nil {
		return err
	}
	_, _, err = s.ready(ctx)
	return err
}

// CallTool calls tool on server for caller, who reaches the server in the
// request's _meta. A tool that reports its own failure gives a Result with
// IsError and a nil error; an error means the call did not complete: an
// unknown server, one not running, a lost connection, a protocol error, a
// timeout, whose text says "timed out after Ns", or a result that breaks
// the tool's output schema (ErrBadResult).
func (h *Hub) CallTool(ctx context.Context, caller mcpgram.Caller, server, tool string, args map[string]any) (*mcpgram.Result, error) {
	res, _, err := h.callTool(ctx, caller, server, tool, args, nil)
	return res, err
}

// callTool is CallTool, asking for a task with params task where the
// server offers one for tool (see StartTool).
func (h *Hub) callTool(ctx context.Context, caller mcpgram.Caller, server, tool string, args map[string]any, task *mcp.TaskParams) (*mcpgram.Result, *mcpgram.Task, error) {
	s, err := h.server(server)
	if err != nil {
		return nil, nil, fmt.Errorf("call tool %q: %w", tool, err)
	}
	if args == nil {
		args = map[string]any{}
	}
	params := map[string]any{
		"name":      tool,
		"arguments": args,
		"_meta":     meta(caller),
	}
	if task != nil {
		params["task"] = task
	}
	raw, err := s.request(ctx, "tools/call", params, caller, tool, "")
	if err != nil {
		return nil, nil, fmt.Errorf("call tool %q on %q: %w", tool, server, err)
	}
	if task != nil && isTaskCreated(raw) {
		t, err := decodeTask(raw, true)
		if err != nil {
			return nil, nil, fmt.Errorf("call tool %q on %q: %w", tool, server, err)
		}
		return nil, t, nil
	}
	res, err := decodeCallResult(raw)
	if err == nil {
		err = s.checkOutput(tool, res)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("call tool %q on %q: %w", tool, server, err)
	}
	if res.IsError {
		if hint := s.noteRefusal(res.Text()); hint != "" {
			res.Content = append(res.Content, mcpgram.Content{Type: "text", Text: "(mcpgram: " + hint + ".)"})
		}
	}
	return res, nil, nil
}

// ReadResource reads the resource at uri from server for caller.
func (h *Hub) ReadResource(ctx context.Context, caller mcpgram.Caller, server, uri string) (*mcpgram.Result, error) {
	s, err := h.server(server)
	if err != nil {
		return nil, fmt.Errorf("read resource %q: %w", uri, err)
	}
	raw, err := s.request(ctx, "resources/read", map[string]any{
		"uri":   uri,
		"_meta": meta(caller),
	}, caller, "", uri)
	if err != nil {
		return nil, fmt.Errorf("read resource %q on %q: %w", uri, server, err)
	}
	res, notes, err := decodeReadResult(raw)
	if err != nil {
		return nil, fmt.Errorf("read resource %q on %q: %w", uri, server, err)
	}
	s.notePages(notes)
	return res, nil
}

// AllowTool adds tool to the autoApprove list of server in the settings
// file, so that it runs without asking the user from now on.
func (h *Hub) AllowTool(server, tool string) error {
	s, err := h.server(server)
	if err != nil {
		return err
	}
	h.fileMu.Lock()
	defer h.fileMu.Unlock()
	var list []string
	err = patchServer(h.path, server, "autoApprove", func(old json.RawMessage) (json.RawMessage, error) {
		if len(old) > 0 {
			if err := json.Unmarshal(old, &list); err != nil {
				return nil, fmt.Errorf("autoApprove of %q is not a list of names: %w", server, err)
			}
		}
		if !slices.Contains(list, tool) {
			list = append(list, tool)
		}
		return marshalList(list)
	})
	if err != nil {
		return fmt.Errorf("allow tool %q of %q: %w", tool, server, err)
	}
	s.mu.Lock()
	s.cfg.autoApprove = list
	s.mu.Unlock()
	h.changed()
	return nil
}
