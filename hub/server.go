package hub

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/hub/confine"
)

// stderrKeep is how much of a server's recent stderr the hub keeps.
const stderrKeep = 16 << 10

// childEnvKeys are the only variables of the bot's environment a child
// inherits: the bot's environment holds the Telegram token and the model's
// API key, which no server should see unless its settings pass them.
var childEnvKeys = []string{"PATH", "HOME", "USER", "LANG", "TMPDIR", "TERM"}

var (
	// errTimeout is the cause a context ends with when the server's
	// timeout runs out (at start-up or in a request), told apart from the
	// caller's own cancel; callers of a request see ErrTimeout.
	errTimeout = errors.New("request timed out")
	// errExited stands for "the process ended on its own"; fail turns it
	// into the exit code and last stderr line.
	errExited = errors.New("exited")
)

// A server runs one entry of the settings file: it (re)starts the process
// or remote session, keeps its catalog, and routes requests to it.
type server struct {
	hub  *Hub
	name string
	log  *slog.Logger

	mu      sync.Mutex
	cfg     config
	status  mcpgram.Status
	errMsg  string
	lastErr string // why it last failed, kept once it runs again
	// writable, sandboxed and uid are how its last process ran: the
	// paths it may write, in a sandbox or not, as which user; refusal is
	// the last write the sandbox refused it, and how to allow it.
	writable   []string
	sandboxed  bool
	uid        int
	refusal    string
	exitCode   int
	lastStderr string
	restarts   int
	conn       *conn  // set while running
	stderr     *tail  // of the last process
	about      string // what the server says it is for (see ServerInfo.Description)
	title      string // its display name (see ServerInfo.Title)
	tools      []mcpgram.Tool
	resources  []mcpgram.Resource
	templates  []mcpgram.ResourceTemplate
	prompts    []mcpgram.Prompt
	completes  bool               // the server offers completion/complete
	notes      []string           // what Screen refused or cut of the catalog
	outputs    outputSchemas      // the tools' output schemas, compiled
	cancel     context.CancelFunc // set while the run loop lives
	done       chan struct{}      // closed when the run loop returns
	// stopErr says how the run loop's last connection ended when it was
	// told to stop: an error if the process had to be killed.
	stopErr error

	// users are the sessions of a server each user connects their own
	// account to (see account.go); nil unless it runs.
	users *accounts
	// synthetic: the catalog lists the connect tool of a per-user server
	// that no user has connected to yet, which needs no approval (it
	// asks the user itself).
	synthetic bool
	// signIn: the last connection failed for want of the operator's
	// sign-in (see ServerInfo.SignIn).
	signIn bool
	// cause: why a remote server is down, where the hub can tell (see
	// ServerInfo.Cause).
	cause mcpgram.Cause

	// op serializes what starts and stops the server (toggles, restarts,
	// reloads, Close), so that one never interleaves with another.
	op sync.Mutex
}

func newServer(h *Hub, cfg config) *server {
	s := &server{
		hub:      h,
		name:     cfg.name,
		log:      h.log.With("server", cfg.name),
		cfg:      cfg,
		exitCode: -1,
	}
	s.status, s.errMsg = cfg.restingState()
	return s
}

// restingState is the state of a server with settings c that is not
// running: a disabled entry is disabled even if it is broken, since the
// user did not ask for it to run.
func (c config) restingState() (mcpgram.Status, string) {
	switch {
	case c.disabled:
		return mcpgram.StatusDisabled, ""
	case c.err != nil:
		return mcpgram.StatusFailed, "invalid settings: " + c.err.Error()
	default:
		return mcpgram.StatusStopped, ""
	}
}

// A conn is one live connection: a child process over stdio, or a remote
// session over HTTP.
type conn struct {
	// user is whose account the connection acts as: "" for the
	// operator's (the one connection of a server).
	user    string
	client  *client.Client
	tr      transport.Interface
	cmd     *exec.Cmd // nil for a remote server
	stderr  *tail
	started time.Time
	nextID  atomic.Int64

	// lost is closed when the process exits, its pipe breaks, or the remote
	// connection drops; exited only when the process has exited.
	lost     chan struct{}
	lostOnce sync.Once
	exited   chan struct{}
	// closed is closed once the transport has been shut down.
	closed    chan struct{}
	closeOnce sync.Once
	// refresh asks for the catalog to be read again.
	refresh chan struct{}

	stdout   *os.File       // our end of a child's stdout
	lines    *io.PipeWriter // what the stdout guard hands mcp-go
	requests inFlight       // the hub's requests awaiting an answer
	calls    calls          // the calls among them, for what their servers ask
	schemas  schemas        // what a 2025 server over stdio asks, as written

	// want is the revision to ask for in initialize; version is the one
	// negotiated; modern, whether it is 2026-07-28 or later, whose requests
	// carry their own _meta.
	want    string
	version string
	modern  bool
	hubMeta map[string]any // the _meta keys of a modern connection
	// tools are the server's tool definitions, for the Mcp-Param headers
	// of a modern connection over HTTP.
	toolsMu sync.Mutex
	tools   map[string]mcp.Tool
	// stopListen ends the subscriptions/listen stream of a modern connection.
	stopListen func()

	// sandboxed says the child is bubblewrap, which leads the process
	// group; tmp is a Landlock sandbox's private temporary folder.
	sandboxed bool
	// outOfMemory: its stderr said it ran out of memory.
	outOfMemory atomic.Bool
	// depth is how many generations below the process the hub started
	// the server's own processes begin (bubblewrap's two come first).
	depth int
	tmp   string

	reasonMu sync.Mutex
	reason   error // why the hub stopped the child, if it did

	// stopErr is what shutdown returned, for the run loop to report.
	stopErr error
}

func (c *conn) setReason(err error) {
	c.reasonMu.Lock()
	defer c.reasonMu.Unlock()
	if c.reason == nil {
		c.reason = err
	}
}

func (c *conn) stopReason() error {
	c.reasonMu.Lock()
	defer c.reasonMu.Unlock()
	return c.reason
}

func (c *conn) markLost() { c.lostOnce.Do(func() { close(c.lost) }) }

// removeTmp removes the private temporary folder of a Landlock sandbox.
func (c *conn) removeTmp() {
	if c.tmp != "" {
		_ = os.RemoveAll(c.tmp)
	}
}

// close shuts the transport down once: for a child, that closes its
// stdin. The transport goes first, so that ending the subscriptions/listen
// stream of a modern connection sends the server nothing more.
func (c *conn) close() {
	c.closeOnce.Do(func() {
		_ = c.client.Close()
		if c.stopListen != nil {
			c.stopListen()
		}
		close(c.closed)
	})
}

// info returns a snapshot of s for the catalog.
func (s *server) info() mcpgram.ServerInfo {
	s.mu.Lock()
	cfg := s.cfg
	s.mu.Unlock()
	var plan sandboxPlan
	if cfg.typ == TypeStdio && cfg.err == nil {
		plan = s.hub.plan(cfg)
	}
	notSandboxed := plan.why
	if plan.err != nil {
		notSandboxed = plan.err.Error()
	}
	var uid int
	var bounds mcpgram.Bounds
	if cfg.typ == TypeStdio && cfg.err == nil {
		uid, bounds = s.hub.serverUser(s.name).uid, cfg.bounds
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	autoApprove := slices.Clone(s.cfg.autoApprove)
	if s.synthetic {
		autoApprove = append(autoApprove, ConnectTool)
	}
	return mcpgram.ServerInfo{
		Sandbox:           plan.engine,
		UID:               uid,
		Bounds:            bounds,
		NotSandboxed:      notSandboxed,
		Name:              s.name,
		Status:            s.status,
		Error:             s.errMsg,
		LastError:         s.lastErr,
		ExitCode:          s.exitCode,
		LastStderr:        s.lastStderr,
		Restarts:          s.restarts,
		Protocol:          s.protocol(),
		Description:       s.about,
		Title:             s.title,
		Timeout:           s.cfg.timeout,
		AutoApprove:       autoApprove,
		PerUser:           s.cfg.perUser,
		Tools:             slices.Clone(s.tools),
		Resources:         slices.Clone(s.resources),
		ResourceTemplates: slices.Clone(s.templates),
		Prompts:           slices.Clone(s.prompts),
		Completions:       s.completes,
		Notes:             s.allNotes(),
		SignIn:            s.signIn,
		Cause:             s.cause,
		Account:           s.cfg.account,
	}
}

// protocol is the revision of the live connection; s.mu is held.
func (s *server) protocol() string {
	if s.conn == nil {
		return ""
	}
	return s.conn.version
}

// start launches the run loop unless it is already running. The returned
// channel is closed once the first attempt has succeeded or failed.
func (s *server) start() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	ready := make(chan struct{})
	if s.cancel != nil || s.hub.isClosed() {
		close(ready)
		return ready
	}
	if s.cfg.err != nil {
		s.status, s.errMsg = mcpgram.StatusFailed, "invalid settings: "+s.cfg.err.Error()
		s.hub.changed()
		close(ready)
		return ready
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	s.done = make(chan struct{})
	s.status, s.errMsg, s.cause = mcpgram.StatusStarting, "", ""
	s.hub.changed()
	go func(done chan struct{}) {
		defer close(done)
		err := s.run(ctx, ready)
		s.mu.Lock()
		s.stopErr = err
		s.mu.Unlock()
	}(s.done)
	return ready
}

// stop ends the run loop, stopping the process, and leaves s in state, or
// with state "" in the state its settings call for at rest. It returns an
// error if the process did not stop when asked and had to be killed.
func (s *server) stop(state mcpgram.Status) error {
	s.mu.Lock()
	cancel, done := s.cancel, s.done
	s.cancel, s.done = nil, nil
	s.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
	s.mu.Lock()
	err := s.stopErr
	s.stopErr = nil
	s.status, s.errMsg, s.cause = state, "", ""
	if state == "" {
		s.status, s.errMsg = s.cfg.restingState()
	}
	s.clearCatalog()
	s.mu.Unlock()
	s.hub.changed()
	return err
}

// stopLogged is stop for callers with no one to tell but the log.
func (s *server) stopLogged(state mcpgram.Status) {
	if err := s.stop(state); err != nil {
		s.log.Warn("server did not stop cleanly", "err", err)
	}
}

func (s *server) clearCatalog() {
	s.conn, s.about, s.title, s.tools, s.resources, s.templates, s.notes = nil, "", "", nil, nil, nil, nil
	s.prompts, s.completes, s.synthetic = nil, false, false
}

// run keeps the server up until ctx ends: it connects, serves, and after a
// crash reconnects with exponential backoff. A local server that fails its
// very first start is left failed: that is almost always a settings
// problem, and retrying it would only fill the log. A remote one is
// retried, since the network or the far end may come back by itself.
// Once ctx ends, run returns how the connection it then had stopped.
func (s *server) run(ctx context.Context, ready chan struct{}) error {
	var readyOnce sync.Once
	signalReady := func() { readyOnce.Do(func() { close(ready) }) }
	defer signalReady()

	s.mu.Lock()
	remote := s.cfg.typ != TypeStdio && s.cfg.err == nil
	perUser := s.cfg.account == AccountUser
	s.mu.Unlock()
	if perUser {
		return s.runAccounts(ctx, signalReady)
	}
	opts := s.hub.opts
	delay := opts.RestartDelay
	first := true
	for {
		c, err := s.connect(ctx)
		if ctx.Err() != nil {
			switch {
			case err == nil:
				// Up just as it was told to stop.
				return s.shutdown(c)
			case c != nil:
				return c.stopErr
			}
			return nil
		}
		if err != nil {
			s.fail(err, c)
			if first && !remote {
				signalReady()
				return nil
			}
			s.retrying()
			// Start waits for the first outcome, as it stands until the
			// next attempt, not for a comeback.
			signalReady()
		} else {
			first = false
			signalReady()
			s.serve(ctx, c)
			if ctx.Err() != nil {
				return s.shutdown(c)
			}
			// The process died, its pipe broke, or the connection dropped.
			if err := s.shutdown(c); err != nil {
				s.log.Warn("server did not stop cleanly", "err", err)
			}
			why := errors.New("connection lost")
			if c.cmd != nil {
				why = errExited
			}
			if r := c.stopReason(); r != nil {
				why = r
			}
			s.fail(why, c)
			s.restarting()
			if time.Since(c.started) >= opts.HealthyAfter {
				delay = opts.RestartDelay
			}
		}
		s.log.Warn("restarting server", "in", delay)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(delay):
		}
		delay = min(2*delay, opts.MaxRestartDelay)
		s.mu.Lock()
		s.restarts++
		s.status = mcpgram.StatusStarting
		s.mu.Unlock()
		opts.Metrics.ServerRestart(s.name)
		s.hub.changed()
	}
}

// restarting marks a failed server that the run loop will start again:
// calls wait for it instead of failing at once. Error keeps the reason.
func (s *server) restarting() {
	s.mu.Lock()
	s.status = mcpgram.StatusRestarting
	s.mu.Unlock()
	s.hub.changed()
}

// retrying marks a server whose connection failed, which the run loop
// tries again: restarting, so that calls wait for it, unless it waits for
// the operator (a remote server's sign-in or key), which the next attempt
// finds done but no call should wait for: then it stays failed.
func (s *server) retrying() {
	s.mu.Lock()
	cause := s.cause
	s.mu.Unlock()
	if cause == mcpgram.CauseSignIn || cause == mcpgram.CauseKey {
		return
	}
	s.restarting()
}

// fail records why the server is down; c, if any, is the connection that
// ended, whose exit code and stderr explain it.
func (s *server) fail(err error, c *conn) {
	if c != nil && c.cmd != nil {
		c.stderr.settle()
	}
	s.mu.Lock()
	s.status = mcpgram.StatusFailed
	s.clearCatalog()
	s.signIn = errors.Is(err, mcpgram.ErrSignInRequired)
	msg := err.Error()
	s.cause = ""
	if s.cfg.typ != TypeStdio {
		var why string
		if s.cause, why = remoteCause(s.name, err); why != "" {
			msg = why
		} else {
			msg = oneChain(msg)
		}
	}
	if c != nil && c.cmd != nil {
		if st := c.cmd.ProcessState; st != nil {
			s.exitCode = st.ExitCode()
			if errors.Is(err, errExited) {
				msg = st.String()
				if st.ExitCode() >= 0 {
					msg = "exited with code " + strconv.Itoa(st.ExitCode())
				}
				if be := endedByBound(s.cfg.bounds, st.String(), st.ExitCode(), c.outOfMemory.Load()); be != nil {
					msg = be.Error() + " (" + msg + ")"
				}
			}
		}
		s.lastStderr = c.stderr.lastLine()
		if s.lastStderr != "" && !strings.Contains(msg, s.lastStderr) {
			msg += ": " + s.lastStderr
		}
		if hint := sandboxHint(refusedWrite(c.stderr.String()), s.writable, s.sandboxed, s.uid); hint != "" {
			msg += " (" + hint + ")"
			s.refusal = hint
		}
	}
	msg = s.cfg.scrub(msg)
	s.errMsg, s.lastErr = msg, msg
	s.mu.Unlock()
	s.log.Error("server failed", "err", msg)
	s.hub.changed()
}

// serve waits for the connection to end, re-reading the catalog when the
// server says it changed.
func (s *server) serve(ctx context.Context, c *conn) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.lost:
			return
		case <-c.refresh:
			s.mu.Lock()
			timeout := s.cfg.timeout
			s.mu.Unlock()
			rctx, cancel := context.WithTimeout(ctx, timeout)
			if err := s.readCatalog(rctx, c); err != nil {
				s.log.Warn("refresh catalog", "err", err)
			}
			cancel()
		}
	}
}

// connect starts the process or remote session, initializes it and reads
// its catalog, all within the server's timeout. On failure the returned
// conn, if not nil, is already shut down and tells how the process ended.
func (s *server) connect(ctx context.Context) (*conn, error) {
	began := time.Now()
	s.mu.Lock()
	cfg := s.cfg
	s.mu.Unlock()

	c := &conn{
		lost:    make(chan struct{}),
		exited:  make(chan struct{}),
		closed:  make(chan struct{}),
		refresh: make(chan struct{}, 1),
		stderr:  newTail(),
	}
	ictx, cancel := context.WithTimeoutCause(ctx, cfg.timeout, errTimeout)
	defer cancel()
	var err error
	if cfg.typ == TypeStdio {
		s.mu.Lock()
		s.stderr = c.stderr
		s.mu.Unlock()
		err = s.spawn(c, cfg)
	} else {
		err = s.dial(ictx, c, cfg)
	}
	if err != nil {
		return nil, err
	}
	c.started = time.Now()
	s.listen(c)

	phase := "initialize"
	err = s.initialize(ictx, c, cfg)
	if err == nil {
		phase = "tools/list"
		err = s.readCatalog(ictx, c)
	}
	if err != nil {
		if context.Cause(ictx) == errTimeout {
			err = fmt.Errorf("no answer to %s within %s", phase, seconds(cfg.timeout))
		} else if c.cmd != nil {
			// A process that dies at once fails the handshake with
			// whatever the pipe said (broken pipe, closed); how it
			// ended says more.
			select {
			case <-c.exited:
				err = errExited
			case <-time.After(200 * time.Millisecond):
			}
		}
		_ = s.shutdown(c)
		return c, err
	}
	s.mu.Lock()
	s.conn = c
	s.status, s.errMsg, s.exitCode, s.lastStderr, s.signIn, s.cause = mcpgram.StatusRunning, "", -1, "", false, ""
	s.mu.Unlock()
	s.hub.opts.Metrics.ServerStarted(s.name, time.Since(began))
	s.hub.changed()
	s.log.Info("server running", "tools", len(s.info().Tools))
	return c, nil
}

// listen has the hub follow what the server of c notifies: list changes
// and progress.
func (s *server) listen(c *conn) {
	c.client.OnNotification(func(n mcp.JSONRPCNotification) {
		// This runs in mcp-go's read loop: a request from here would wait
		// for a response that loop can no longer read.
		switch n.Method {
		case mcp.MethodNotificationToolsListChanged, mcp.MethodNotificationResourcesListChanged, mcp.MethodNotificationPromptsListChanged:
			select {
			case c.refresh <- struct{}{}:
			default:
			}
		case string(mcp.MethodNotificationProgress):
			c.progressed(n)
		}
	})
}

// spawn starts the child process of a stdio server, in its sandbox.
func (s *server) spawn(c *conn, cfg config) (err error) {
	defer func() {
		if err != nil {
			c.removeTmp()
		}
	}()
	path := cfg.command
	if !strings.ContainsRune(path, '/') {
		found, err := findCommand(path)
		if err != nil {
			return err
		}
		path = found
	}
	// A path through a folder the sandbox does not show (/srv/a/../bin)
	// would not be found there.
	path = filepath.Clean(path)
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("command %s: %w", path, errors.Unwrap(err))
	}
	cmd := exec.Command(path, cfg.args...)
	cmd.Dir = cfg.workDir()
	setProcessGroup(cmd)
	start, err := s.confine(c, cmd, cfg)
	if err != nil {
		return err
	}
	// Files, not writers or exec's pipes: exec would copy a writer in a
	// goroutine that Wait waits for (a grandchild holding the pipe would
	// keep it from returning), and it closes its own pipes in Wait, which
	// may lose the last reply still unread.
	stdin, toChild, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("stdin pipe: %w", err)
	}
	fromChild, stdout, err := os.Pipe()
	if err != nil {
		stdin.Close()
		toChild.Close()
		return fmt.Errorf("stdout pipe: %w", err)
	}
	errRead, errWrite, err := os.Pipe()
	if err != nil {
		for _, f := range []*os.File{stdin, toChild, fromChild, stdout} {
			f.Close()
		}
		return fmt.Errorf("stderr pipe: %w", err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, errWrite
	err = start()
	// The child has its ends now; ours would keep the pipes open.
	stdin.Close()
	stdout.Close()
	errWrite.Close()
	if err != nil {
		for _, f := range []*os.File{toChild, fromChild, errRead} {
			f.Close()
		}
		return fmt.Errorf("start %s: %w", filepath.Base(path), err)
	}
	c.cmd, c.stdout = cmd, fromChild
	go c.stderr.readFrom(errRead, s.log, func(line string) { s.stderrBound(c, cfg.bounds, line) })
	go s.watchBounds(c, cfg.bounds)
	go func() {
		// Wait reaps the child; with the pipes ours, it closes none.
		_ = cmd.Wait()
		close(c.exited)
		c.markLost()
	}()
	return s.attach(c, cmd, filepath.Base(path), toChild, fromChild)
}

// attach connects an MCP client to the started child's pipes.
func (s *server) attach(c *conn, cmd *exec.Cmd, name string, toChild, fromChild *os.File) error {
	lines, toTransport := io.Pipe()
	guard := &stdoutGuard{
		max:      s.hub.opts.MaxMessage,
		inFlight: c.requests.list,
		asks:     c.schemas.put,
		overflow: func(err error) {
			c.setReason(err)
			s.log.Error("stopping server", "err", err)
			kill(cmd)
		},
	}
	go guard.run(fromChild, toTransport)
	c.lines = toTransport
	c.tr = transport.NewIO(lines, toChild, nil)
	c.client = client.NewClient(c.tr, s.clientOptions(TypeStdio)...)
	if err := c.client.Start(context.Background()); err != nil {
		return fmt.Errorf("start %s: %w", name, err)
	}
	s.answerRequests(c)
	return nil
}

// confine gives cmd its environment, its bounds, its user (never root)
// and, as the server's sandbox plan says, its sandbox, and returns what
// starts it. Every server runs through the program of package confine,
// which takes on the bounds and user at the last moment, inside the
// sandbox, and then becomes the server.
func (s *server) confine(c *conn, cmd *exec.Cmd, cfg config) (start func() error, err error) {
	h := s.hub
	plan := h.plan(cfg)
	if plan.err != nil {
		return nil, plan.err
	}
	cmd.Env = childEnv(cfg.env)
	command := filepath.Clean(cmd.Path)
	u := h.serverUser(s.name)
	// Unsandboxed, a server that runs as the bot's user can write what the
	// bot can anyway; one with a user of its own is refused what it would
	// be refused sandboxed, for the hub gives it its folders.
	v, err := newView(cfg, h.viewPlan(s.name, cfg, command, envMap(cmd.Env)))
	if err != nil && (plan.engine != "" || u.uid != 0) {
		return nil, err
	}
	if err := s.prepare(v, u, command, plan.engine); err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.writable, s.sandboxed, s.uid, s.refusal = v.rw, plan.engine != "", u.uid, ""
	s.mu.Unlock()
	for k, dir := range v.cacheEnv {
		cmd.Env = withEnv(cmd.Env, k, dir)
	}
	// The processes bound counts the server alone where it has a user of
	// its own, or a user namespace (bubblewrap run by anyone but root).
	spec := confine.Spec{UID: u.uid, GID: u.gid, Limits: limits(cfg.bounds, u.uid != 0 || plan.engine == engineBubblewrap)}
	prog := h.opts.Confine
	switch plan.engine {
	case engineBubblewrap:
		cmd.Env = withTmp(cmd.Env, cfg, "/tmp")
		cmd.Path = h.support().Bubblewrap
		cmd.Args = append([]string{"bwrap"}, bwrapArgs(v, jail{confine: prog, spec: spec, command: command, args: cfg.args, tmp: cfg.bounds.Tmp})...)
		c.sandboxed, c.depth = true, 2
		return func() error { return h.launcher.start(cmd) }, nil
	case engineLandlock:
		// Landlock cannot give the server a /tmp of its own: it gets a
		// private folder instead.
		if c.tmp, err = os.MkdirTemp("", "mcpgram-server-"); err != nil {
			return nil, fmt.Errorf("private temporary folder: %w", err)
		}
		if u.uid != 0 {
			if err := os.Chown(c.tmp, u.uid, u.gid); err != nil {
				return nil, fmt.Errorf("private temporary folder: %w", err)
			}
		}
		cmd.Env = withTmp(cmd.Env, cfg, c.tmp)
		v.addRW(c.tmp)
		v.addRO(prog)
	default:
		s.log.Warn("server runs without a sandbox: it can read whatever its user can", "why", plan.why, "uid", u.uid)
	}
	args, err := confine.Command(spec, command, cfg.args)
	if err != nil {
		return nil, err
	}
	cmd.Path, cmd.Args = prog, append([]string{prog}, args...)
	if plan.engine == engineLandlock {
		return func() error { return startLandlocked(cmd, v, h.support().LandlockABI) }, nil
	}
	return cmd.Start, nil
}

// prepare makes what view v shows that is not there yet, for the server's
// user u, and, where that is not the bot's, gives it what of its folders
// root holds, and checks that it may run command and, outside a
// bubblewrap sandbox (which makes the folders on the way itself), reach
// what it must.
func (s *server) prepare(v view, u user, command, engine string) error {
	if u.uid != 0 {
		var st syscall.Stat_t
		if err := syscall.Stat(command, &st); err == nil && st.Mode&0o001 == 0 && int(st.Uid) != u.uid {
			return fmt.Errorf("%w: it runs as user %d (the bot runs as root, and no server does), which may not run %s: let others run it (chmod o+rx %s)", errView, u.uid, command, command)
		}
	}
	if u.uid != 0 && engine != engineBubblewrap {
		for _, p := range append([]string{command}, v.rw...) {
			if d := unreachable(p, u); d != "" {
				return fmt.Errorf("%w: it runs as user %d (the bot runs as root, and no server does), which cannot pass %s on the way to %s: open it to others (chmod o+x %s), keep the server's files elsewhere, or install bubblewrap", errView, u.uid, d, p, d)
			}
		}
	}
	if err := v.make(u); err != nil {
		return err
	}
	if u.uid == 0 {
		return nil
	}
	given, err := adopt(v.rw, u)
	if len(given) > 0 {
		s.log.Info("gave the server's user what root held of its folders", "uid", u.uid, "paths", given)
	}
	return err
}

// withEnv sets k=v in env.
func withEnv(env []string, k, v string) []string {
	env = slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, k+"=") })
	return append(env, k+"="+v)
}

// withTmp points TMPDIR at the sandbox's temporary folder, unless the
// server's own env sets it.
func withTmp(env []string, cfg config, tmp string) []string {
	if _, own := cfg.env["TMPDIR"]; own {
		return env
	}
	env = slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, "TMPDIR=") })
	return append(env, "TMPDIR="+tmp)
}

// envMap reads an environment list into a map.
func envMap(env []string) map[string]string {
	m := make(map[string]string, len(env))
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

// dial opens the session of a remote server, negotiating its revision
// first: a 2025 server over Streamable HTTP sends what it asks, and its
// list changes, on the stream of a GET that the session keeps open, which
// 2026-07-28 removed.
func (s *server) dial(ctx context.Context, c *conn, cfg config) error {
	c.want = s.negotiate(ctx, c, cfg)
	var err error
	switch cfg.typ {
	case TypeStreamableHTTP:
		opts := []transport.StreamableHTTPCOption{transport.WithHTTPHeaders(cfg.headers), transport.WithHTTPLogger(s.transportLogger(cfg))}
		if hc := s.httpClient(cfg, c.user); hc != nil {
			opts = append(opts, transport.WithHTTPBasicClient(hc))
		}
		if !mcp.IsModernProtocol(c.want) {
			//lint:ignore SA1019 deprecated for 2026-07-28, which this connection does not speak: a 2025 server sends its requests and list changes on this stream.
			opts = append(opts, transport.WithContinuousListening())
		}
		var tr *transport.StreamableHTTP
		if tr, err = transport.NewStreamableHTTP(cfg.url, opts...); err == nil {
			c.client = client.NewClient(tr, s.clientOptions(cfg.typ)...)
		}
	case TypeSSE:
		var tr *transport.SSE
		opts := []transport.ClientOption{transport.WithHeaders(cfg.headers), transport.WithSSELogger(s.transportLogger(cfg))}
		if hc := s.httpClient(cfg, c.user); hc != nil {
			opts = append(opts, transport.WithHTTPClient(hc))
		}
		if tr, err = transport.NewSSE(cfg.url, opts...); err == nil {
			c.client = client.NewClient(tr, s.clientOptions(cfg.typ)...)
		}
	}
	if err != nil {
		return cfg.scrubErr(fmt.Errorf("connect %s: %w", cfg.url, err))
	}
	c.tr = c.client.GetTransport()
	c.client.OnConnectionLost(func(error) { c.markLost() })
	// The SSE stream lives as long as this context, so it must outlast
	// start-up; it ends when the connection is shut down.
	life, cancel := context.WithCancel(context.Background())
	go func() {
		<-c.closed
		cancel()
	}()
	if err := c.client.Start(life); err != nil {
		c.close()
		return cfg.scrubErr(fmt.Errorf("connect %s: %w", cfg.url, err))
	}
	s.answerRequests(c)
	return nil
}

// httpClient is the HTTP client of a remote server's requests: one that
// signs in as user ("" for the operator) where the hub has an Authorizer,
// else nil (mcp-go's own).
func (s *server) httpClient(cfg config, user string) *http.Client {
	if s.hub.opts.Auth == nil {
		return nil
	}
	return &http.Client{Transport: s.hub.opts.Auth.Transport(s.name, user, cfg.url, cfg.oauth, http.DefaultTransport)}
}

// clientOptions are those of an mcp-go client of a server of transport
// typ: the capabilities the hub implements there.
func (s *server) clientOptions(typ string) []client.ClientOption {
	return []client.ClientOption{client.WithClientCapabilities(s.hub.capabilities(typ))}
}

// answerRequests has the hub, not mcp-go's client, answer what the server
// of c requests, once the client has started (its Start sets its own
// handler).
func (s *server) answerRequests(c *conn) {
	if b, ok := c.tr.(transport.BidirectionalInterface); ok {
		b.SetRequestHandler(s.serverRequests(c))
	}
}

// initialize negotiates the revision and initializes c with it: with
// server/discover for 2026-07-28, with the initialize handshake before.
// A modern connection then listens for the list changes the hub follows.
func (s *server) initialize(ctx context.Context, c *conn, cfg config) error {
	if c.want == "" {
		c.want = s.negotiate(ctx, c, cfg)
	}
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = c.want
	req.Params.ClientInfo = clientInfo
	req.Params.Capabilities = s.hub.capabilities(cfg.typ)
	res, err := c.client.Initialize(ctx, req)
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	about := describe(res.ServerInfo, res.Instructions)
	var notes []string
	title := cutTitle(res.ServerInfo.Title, s.name, &notes)
	if title == s.name {
		title = ""
	}
	for _, n := range notes {
		s.log.Warn("screened the server's catalog", "note", n)
	}
	s.mu.Lock()
	s.about, s.title = about, title
	s.mu.Unlock()
	c.version = c.client.ProtocolVersion()
	c.modern = mcp.IsModernProtocol(c.version)
	if c.modern {
		c.hubMeta = s.hub.protocolMeta(c.version)
		filter := mcp.SubscriptionFilter{ToolsListChanged: true, ResourcesListChanged: true, PromptsListChanged: true}
		stop, err := c.client.ListenAsync(context.Background(), filter, func(err error) {
			s.log.Debug("subscriptions/listen ended", "err", err)
		})
		if err == nil {
			c.stopListen = stop
		}
	}
	s.log.Debug("server initialized", "protocol", c.version)
	return nil
}

// maxAbout bounds a server's description: it goes into the prompt, one
// line per server, and a server must not fill it.
const maxAbout = 200

// describe is what a server says it is for, in one line of at most
// maxAbout bytes: its description, else its title, else the first
// sentence of its instructions.
func describe(info mcp.Implementation, instructions string) string {
	s := info.Description
	if strings.TrimSpace(s) == "" {
		s = info.Title
	}
	if strings.TrimSpace(s) == "" {
		s = firstSentence(instructions)
	}
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > maxAbout {
		cut := maxAbout
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// firstSentence is s up to the end of its first sentence or line.
func firstSentence(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	for i := 0; i+1 < len(s); i++ {
		if (s[i] == '.' || s[i] == '!' || s[i] == '?') && s[i+1] == ' ' {
			return s[:i+1]
		}
	}
	return s
}

// readCatalog lists the tools, resources and resource templates of the
// server and publishes them.
func (s *server) readCatalog(ctx context.Context, c *conn) error {
	caps := c.client.GetServerCapabilities()
	var tools []mcpgram.Tool
	if caps.Tools != nil {
		res, err := c.client.ListTools(ctx, mcp.ListToolsRequest{})
		if err != nil {
			return fmt.Errorf("list tools: %w", err)
		}
		defs := make(map[string]mcp.Tool, len(res.Tools))
		for _, t := range res.Tools {
			tools = append(tools, convertTool(t))
			defs[t.Name] = t
		}
		c.toolsMu.Lock()
		c.tools = defs
		c.toolsMu.Unlock()
		slices.SortFunc(tools, func(a, b mcpgram.Tool) int { return strings.Compare(a.Name, b.Name) })
	}
	var resources []mcpgram.Resource
	var templates []mcpgram.ResourceTemplate
	if caps.Resources != nil {
		// Resources are an extra: a server that fails to list them still
		// serves its tools.
		if res, err := c.client.ListResources(ctx, mcp.ListResourcesRequest{}); err != nil {
			s.log.Warn("list resources", "err", err)
		} else {
			for _, r := range res.Resources {
				resources = append(resources, mcpgram.Resource{URI: r.URI, Name: r.Name, Description: r.Description, MIMEType: r.MIMEType})
			}
			slices.SortFunc(resources, func(a, b mcpgram.Resource) int { return strings.Compare(a.URI, b.URI) })
		}
		if res, err := c.client.ListResourceTemplates(ctx, mcp.ListResourceTemplatesRequest{}); err != nil {
			s.log.Debug("list resource templates", "err", err)
		} else {
			for _, r := range res.ResourceTemplates {
				t := mcpgram.ResourceTemplate{Name: r.Name, Description: r.Description, MIMEType: r.MIMEType}
				if r.URITemplate != nil && r.URITemplate.Template != nil {
					t.URITemplate = r.URITemplate.Raw()
				}
				templates = append(templates, t)
			}
			slices.SortFunc(templates, func(a, b mcpgram.ResourceTemplate) int { return strings.Compare(a.Name, b.Name) })
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	tools, resources, templates, notes := Screen(tools, resources, templates)
	prompts, promptNotes := ScreenPrompts(s.listPrompts(ctx, c))
	if len(notes) < maxNotes {
		notes = capNotes(append(notes, promptNotes...))
	}
	for _, n := range notes {
		s.log.Warn("screened the server's catalog", "note", n)
	}
	s.mu.Lock()
	s.tools, s.resources, s.templates, s.notes = tools, resources, templates, notes
	s.prompts, s.completes = prompts, caps.Completions != nil
	s.mu.Unlock()
	s.outputs.reset()
	s.hub.changed()
	return nil
}

func convertTool(t mcp.Tool) mcpgram.Tool {
	out := mcpgram.Tool{Name: t.Name, Title: t.Title, Description: t.Description}
	if out.Title == "" {
		out.Title = t.Annotations.Title
	}
	// Marshal the whole tool: mcp-go keeps a schema either typed or raw,
	// and its MarshalJSON knows which.
	if b, err := json.Marshal(t); err == nil {
		var v struct {
			InputSchema  json.RawMessage `json:"inputSchema"`
			OutputSchema json.RawMessage `json:"outputSchema"`
		}
		if json.Unmarshal(b, &v) == nil {
			out.InputSchema = compactJSON(v.InputSchema)
			out.OutputSchema = compactJSON(v.OutputSchema)
		}
	}
	if len(out.InputSchema) == 0 {
		out.InputSchema = json.RawMessage(`{"type":"object"}`)
	}
	a := t.Annotations
	out.Hints = mcpgram.Hints{ReadOnly: a.ReadOnlyHint, Destructive: a.DestructiveHint, Idempotent: a.IdempotentHint, OpenWorld: a.OpenWorldHint}
	if t.Meta != nil {
		if raw, ok := t.Meta.AdditionalFields[MetaConsentWhen]; ok {
			out.ConsentWhen = consentWhen(raw)
		}
		if raw, ok := t.Meta.AdditionalFields[MetaPerUser]; ok {
			out.PerUser = raw != false
		}
	}
	return out
}

// compactJSON is raw without its white space; nil when raw is empty,
// null or not JSON.
func compactJSON(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var compact bytes.Buffer
	if json.Compact(&compact, raw) != nil {
		return nil
	}
	return json.RawMessage(compact.Bytes())
}

// consentWhen reads a tool's consent declaration. One that is malformed
// still declares that consent matters, so it is read as "every call": the
// safe side of a server's mistake.
func consentWhen(raw any) map[string][]string {
	out := map[string][]string{}
	m, ok := raw.(map[string]any)
	if !ok {
		return out
	}
	for name, v := range m {
		list, ok := v.([]any)
		if !ok {
			return map[string][]string{}
		}
		for _, e := range list {
			s, ok := e.(string)
			if !ok {
				return map[string][]string{}
			}
			out[name] = append(out[name], s)
		}
	}
	return out
}

// shutdown stops a connection for good: close stdin, give the server a
// moment, then SIGTERM and at last SIGKILL its whole process group. Closed
// stdin and SIGTERM are how the MCP specification ends a stdio server; a
// server, or a process it left behind, that ignored both and had to be
// killed is an error, which may mean work it had not saved.
func (s *server) shutdown(c *conn) error {
	c.close()
	if c.cmd == nil {
		return nil
	}
	opts := s.hub.opts
	select {
	case <-c.exited:
	case <-time.After(opts.StopGrace):
		terminate(c.cmd, c.sandboxed)
		select {
		case <-c.exited:
		case <-time.After(opts.KillGrace):
			kill(c.cmd)
			// Reaped once dead, so that how it ended can be read.
			<-c.exited
			c.stopErr = fmt.Errorf("killed: it ignored its closed stdin for %s and SIGTERM for %s", seconds(opts.StopGrace), seconds(opts.KillGrace))
		}
	}
	if endGroup(c.cmd.Process.Pid, opts.KillGrace) {
		c.stopErr = errors.Join(c.stopErr, fmt.Errorf("killed processes it left behind, which ignored SIGTERM for %s", seconds(opts.KillGrace)))
	}
	// Our end of its stdout stays open until it has exited: a server may
	// still write as it winds up (a modern one answers its open
	// subscriptions/listen request), and a write to a pipe nobody reads
	// would kill it with SIGPIPE before its clean-up. Then the guard's
	// reads and writes end, and mcp-go reads the end of its input.
	c.stdout.Close()
	c.lines.Close()
	c.removeTmp()
	return c.stopErr
}

// request sends a tools/call or resources/read (of tool or uri) for
// caller on the current connection and returns the raw result. It
// bypasses mcp-go's typed calls, which fail to decode a whole result over
// one content type they don't know. A server that answers
// "input_required" gets its questions asked through the hub's Elicitor and
// the request again with the answers, up to MaxElicitations times.
func (s *server) request(ctx context.Context, method string, params map[string]any, caller mcpgram.Caller, tool, uri string) (json.RawMessage, error) {
	s.mu.Lock()
	perUser := s.cfg.account == AccountUser
	s.mu.Unlock()
	if perUser {
		return s.requestAs(ctx, method, params, caller, tool, uri)
	}
	c, cfg, err := s.ready(ctx)
	if err != nil {
		return nil, err
	}
	return s.requestOn(ctx, c, cfg, method, params, caller, tool, uri)
}

// requestOn is request on the connection c.
func (s *server) requestOn(ctx context.Context, c *conn, cfg config, method string, params map[string]any, caller mcpgram.Caller, tool, uri string) (json.RawMessage, error) {
	cl := &call{ctx: ctx, caller: caller, tool: tool, uri: uri, asked: new(atomic.Int32), progress: mcpgram.ProgressOf(ctx)}
	for round := 0; ; round++ {
		raw, err := s.send(ctx, c, cfg, method, params, cl)
		if err != nil {
			return nil, err
		}
		requests, state, more, err := inputRequired(raw)
		if err != nil || !more {
			return raw, err
		}
		if round >= mcpgram.MaxElicitations {
			return nil, errElicitLoop
		}
		answers, err := s.fulfil(cl, requests)
		if err != nil {
			return nil, err
		}
		params = maps.Clone(params)
		params["inputResponses"] = answers
		if state != "" {
			params["requestState"] = state
		} else {
			delete(params, "requestState")
		}
	}
}

// send sends one request with the server's timeout, which stops while the
// server waits for the user (see clock). The call travels in the request's
// context, where a 2025 server's elicitation/create over HTTP finds it.
func (s *server) send(ctx context.Context, c *conn, cfg config, method string, params map[string]any, parent *call) (json.RawMessage, error) {
	timeout := cfg.timeout
	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	cl := &call{ctx: rctx, caller: parent.caller, tool: parent.tool, uri: parent.uri, asked: parent.asked, done: make(chan struct{}), progress: parent.progress}
	defer close(cl.done)
	cl.clock = newClock(timeout, func() { cancel(errTimeout) })
	defer cl.clock.stop()
	rctx = context.WithValue(rctx, callKey{}, cl)
	idText := requestID(c.nextID.Add(1))
	id := mcp.NewRequestId(idText)
	c.requests.add(idText)
	defer c.requests.remove(idText)
	c.calls.add(idText, cl)
	defer c.calls.remove(idText)
	if method == string(mcp.MethodToolsCall) || method == string(mcp.MethodResourcesRead) {
		// Every round has its own id, and its progress its own token.
		params = withProgressToken(params, idText)
	}
	resp, err := c.tr.SendRequest(rctx, c.jsonRPC(id, method, params, parent))
	if err != nil {
		if rctx.Err() != nil {
			c.cancelRequest(id, context.Cause(rctx))
			if context.Cause(rctx) == errTimeout {
				return nil, fmt.Errorf("%w after %s", mcpgram.ErrTimeout, seconds(timeout))
			}
			return nil, ctx.Err()
		}
		if errors.Is(err, transport.ErrTransportClosed) {
			// The process may live on with a broken pipe: have the run loop
			// stop it and start a new one.
			c.markLost()
			return nil, fmt.Errorf("connection lost during the call: %w", mcpgram.ErrNotRunning)
		}
		return nil, cfg.scrubErr(err)
	}
	if resp.Error != nil {
		return nil, resp.Error.AsError()
	}
	return resp.Result, nil
}

// jsonRPC is the request to send on c: on a modern connection its _meta
// also carries the revision, the client and its capabilities, and over
// HTTP it has the Mcp-* headers.
func (c *conn) jsonRPC(id mcp.RequestId, method string, params map[string]any, cl *call) transport.JSONRPCRequest {
	req := transport.JSONRPCRequest{JSONRPC: mcp.JSONRPC_VERSION, ID: id, Method: method, Params: params}
	if !c.modern {
		return req
	}
	p := maps.Clone(params)
	m := map[string]any{}
	if old, ok := params["_meta"].(map[string]any); ok {
		maps.Copy(m, old)
	}
	maps.Copy(m, c.hubMeta)
	p["_meta"] = m
	req.Params = p
	req.Header = standardHeaders(c.version, mcp.MCPMethod(method), p)
	if method == string(mcp.MethodToolsCall) {
		c.toolsMu.Lock()
		t, ok := c.tools[cl.tool]
		c.toolsMu.Unlock()
		if raw, err := json.Marshal(p); ok && err == nil {
			for k, v := range mcp.GenerateParamHeaders(&t, raw) {
				if req.Header == nil {
					req.Header = http.Header{}
				}
				req.Header.Set(k, v)
			}
		}
	}
	return req
}

// ready returns the live connection, waiting up to the server's timeout
// while it starts or restarts: a call a moment after a crash runs once the
// server is back instead of failing. A server down for good fails at once.
func (s *server) ready(ctx context.Context) (*conn, config, error) {
	var deadline <-chan time.Time
	for {
		wake := s.hub.changes()
		s.mu.Lock()
		c, cfg, status := s.conn, s.cfg, s.status
		s.mu.Unlock()
		switch {
		case c != nil:
			return c, cfg, nil
		case status != mcpgram.StatusStarting && status != mcpgram.StatusRestarting:
			// The reason stays in the status: it can quote the server's
			// stderr, and this error may reach the model and any user.
			return nil, cfg, fmt.Errorf("%w (%s)", mcpgram.ErrNotRunning, status)
		}
		if deadline == nil {
			t := time.NewTimer(cfg.timeout)
			defer t.Stop()
			deadline = t.C
		}
		select {
		case <-wake:
		case <-deadline:
			return nil, cfg, fmt.Errorf("%w: still %s after %s", mcpgram.ErrNotRunning, status, seconds(cfg.timeout))
		case <-ctx.Done():
			return nil, cfg, ctx.Err()
		}
	}
}

// cancelRequest tells the server to stop working on a request we gave up
// on, so that it stays usable for the next one: with
// notifications/cancelled, except on a 2026-07-28 connection over HTTP,
// where ending the request's stream is the cancellation. Over the SSE
// transport the result comes on a stream of its own, which the request's
// end leaves open; a 2025 server over Streamable HTTP gets the
// notification too, as that revision asks.
func (c *conn) cancelRequest(id mcp.RequestId, reason error) {
	if c.cmd == nil && c.modern {
		return
	}
	n := mcp.JSONRPCNotification{
		JSONRPC: mcp.JSONRPC_VERSION,
		Notification: mcp.Notification{
			Method: string(mcp.MethodNotificationCancelled),
			Params: mcp.NotificationParams{AdditionalFields: map[string]any{
				"requestId": id,
				"reason":    reason.Error(),
			}},
		},
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = c.tr.SendNotification(ctx, n)
	}()
}

// childEnv is the environment of a child: a few harmless variables of
// ours and the server's own env entries.
func childEnv(own map[string]string) []string {
	var env []string
	for _, k := range childEnvKeys {
		if _, set := own[k]; set {
			continue
		}
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(own)) {
		env = append(env, k+"="+own[k])
	}
	return env
}

// seconds formats d the way users write timeouts in the settings file.
func seconds(d time.Duration) string {
	if d%time.Second == 0 {
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	}
	return d.String()
}

// A tail keeps the last stderrKeep bytes a server wrote to stderr.
type tail struct {
	mu   sync.Mutex
	buf  []byte
	eof  chan struct{}
	once sync.Once
}

func newTail() *tail { return &tail{eof: make(chan struct{})} }

// settle waits briefly for the last of stderr to arrive after an exit; a
// grandchild may hold the pipe open, so it does not wait for the end.
func (t *tail) settle() {
	select {
	case <-t.eof:
	case <-time.After(200 * time.Millisecond):
	}
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - stderrKeep; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// readFrom keeps what f yields until its end, and logs it line by line at
// debug level for whoever is chasing a misbehaving server.
// Each line goes to each, if not nil, as it comes.
func (t *tail) readFrom(f *os.File, log *slog.Logger, each func(string)) {
	defer t.once.Do(func() { close(t.eof) })
	defer f.Close()
	r := bufio.NewReaderSize(f, 4096)
	for {
		line, err := r.ReadSlice('\n')
		if len(line) > 0 {
			_, _ = t.Write(line)
			if each != nil {
				each(string(line))
			}
			if log.Enabled(context.Background(), slog.LevelDebug) {
				log.Debug("server stderr", "line", strings.TrimRight(string(line), "\r\n"))
			}
		}
		if err != nil && err != bufio.ErrBufferFull {
			return
		}
	}
}

// String returns the kept stderr.
func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// lastLine returns the last non-empty line of the kept stderr.
func (t *tail) lastLine() string {
	lines := strings.Split(t.String(), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			return l
		}
	}
	return ""
}
