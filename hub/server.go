package hub

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/mcpgram/mcpgram"
)

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
	// last is how its last process ran and ended.
	last     lastRun
	restarts int
	conn     *conn // set while running
	// cat is the catalog the server offers, as last read: empty unless
	// it runs.
	cat     snapshot
	outputs outputSchemas      // the tools' output schemas, compiled
	cancel  context.CancelFunc // set while the run loop lives
	done    chan struct{}      // closed when the run loop returns
	// stopErr says how the run loop's last connection ended when it was
	// told to stop: an error if the process had to be killed.
	stopErr error

	// users are the sessions of a server each user connects their own
	// account to (see account.go); nil unless it runs.
	users *accounts
	// signIn: the last connection failed for want of the operator's
	// sign-in (see ServerInfo.SignIn).
	signIn bool
	// cause: why a remote server is down, where the hub can tell (see
	// ServerInfo.Cause).
	cause mcpgram.Cause
	// pageNotes: what the hub ignored of its apps' pages' declarations,
	// as read (see notePages).
	pageNotes []string

	// op serializes what starts and stops the server (toggles, restarts,
	// reloads, Close), so that one never interleaves with another.
	op sync.Mutex
}

func newServer(h *Hub, cfg config) *server {
	s := &server{
		hub:  h,
		name: cfg.name,
		log:  h.log.With("server", cfg.name),
		cfg:  cfg,
		last: lastRun{exitCode: -1},
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
	if s.cat.synthetic {
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
		ExitCode:          s.last.exitCode,
		LastStderr:        s.last.lastStderr,
		Restarts:          s.restarts,
		Protocol:          s.protocol(),
		Description:       s.cat.about,
		Title:             s.cat.title,
		Timeout:           s.cfg.timeout,
		AutoApprove:       autoApprove,
		PerUser:           s.cfg.perUser,
		Tools:             slices.Clone(s.cat.tools),
		Resources:         slices.Clone(s.cat.resources),
		ResourceTemplates: slices.Clone(s.cat.templates),
		Prompts:           slices.Clone(s.cat.prompts),
		Completions:       s.cat.completes,
		Notes:             capNotes(append(s.last.notes(s.cat.notes), s.pageNotes...)),
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
	s.conn, s.cat = nil, snapshot{}
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
		msg = s.last.ended(c, err, s.cfg.bounds, msg)
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

	c := newConn("")
	ictx, cancel := context.WithTimeoutCause(ctx, cfg.timeout, errTimeout)
	defer cancel()
	var err error
	if cfg.typ == TypeStdio {
		s.mu.Lock()
		s.last.stderr = c.stderr
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
	s.status, s.errMsg, s.last.exitCode, s.last.lastStderr, s.signIn, s.cause = mcpgram.StatusRunning, "", -1, "", false, ""
	s.mu.Unlock()
	s.hub.opts.Metrics.ServerStarted(s.name, time.Since(began))
	s.hub.changed()
	s.log.Info("server running", "tools", len(s.info().Tools))
	return c, nil
}
